/**
 * Message (`/messages/{messageId}`): its envelope, payload (a claim-checked one fetched on demand), headers and
 * trace id, each subscriber's delivery, the history and the audit trail, its neighbours in its order key; replay,
 * cancel (all deliveries or one), each with a reason, and what the action did. Read again every few seconds while a
 * delivery is in flight, so a replayed delivery is seen reaching CONFIRMED.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { MessageActionResult } from '../../../admin/message-actions.ts';
import type { HistoryEntry } from '../../../outbox/history.ts';
import type { MessagePage, SequenceNeighbours } from '../message-page.ts';
import type { SequencedMessage } from '../ordering-gaps.ts';
import { ActionDialog, type ActionDialogProps } from './action-dialog.ts';
import { getJson, postJson } from './api.ts';
import { aggregatePath, formatTime, messagePath, text } from './format.ts';
import { DataTable, LoadState, Notice, numeric, StatusBadge } from './page-parts.ts';
import { useResource } from './use-resource.ts';

/** How often a message with a delivery in flight is read again. */
const LIVE_REFRESH_MS = 2_000;

type Action = { readonly kind: 'replay' | 'cancel' | 'skip'; readonly subscriber?: string };

/** The message view. */
export function MessageView({ messageId }: { readonly messageId: string }): VNode {
  const [live, setLive] = useState(false);
  const page = useResource<MessagePage>(
    `/messages/${encodeURIComponent(messageId)}`,
    live ? { refreshMs: LIVE_REFRESH_MS } : {},
  );
  const [action, setAction] = useState<Action | undefined>(undefined);
  const [result, setResult] = useState<string | undefined>(undefined);
  const [payload, setPayload] = useState<{ value?: unknown; error?: string } | undefined>(undefined);
  const data = page.data;
  const inFlight = data === undefined ? false : isInFlight(data);
  useEffect(() => setLive(inFlight), [inFlight]);
  if (data === undefined) {
    return html`<h1>Message <code>${messageId}</code></h1><${LoadState} error=${page.error} loading=${page.loading} />`;
  }
  const message = data.message;
  const deliveries = data.deliveries ?? [];
  const statuses =
    deliveries.length === 0 ? [message.status] : deliveries.map((delivery) => delivery.delivery.status);
  const headers = (
    typeof message.headers === 'object' && message.headers !== null ? message.headers : {}
  ) as Record<string, unknown>;
  const traceparent = typeof headers.traceparent === 'string' ? headers.traceparent : undefined;

  const act = async (chosen: Action, values: Readonly<Record<string, string>>) => {
    const subscriber =
      values.subscriber === '' || values.subscriber === undefined ? chosen.subscriber : values.subscriber;
    if (chosen.kind === 'skip') {
      const skipped = await postJson<{ summary: string }>('/ordering/skip', {
        orderKey: message.orderKey,
        seq: message.seq,
        reason: values.reason,
        ...(subscriber === undefined || subscriber === '' ? {} : { subscriber }),
      });
      setResult(skipped.summary);
      page.reload();
      return;
    }
    const answer = await postJson<MessageActionResult>(
      `/messages/${encodeURIComponent(messageId)}/${chosen.kind}`,
      {
        reason: values.reason,
        ...(subscriber === undefined || subscriber === '' ? {} : { subscriber }),
      },
    );
    setResult(describeResult(answer));
    page.reload();
  };
  const fetchPayload = async () => {
    try {
      setPayload({
        value: (await getJson<{ payload: unknown }>(`/messages/${encodeURIComponent(messageId)}/payload`))
          .payload,
      });
    } catch (cause) {
      setPayload({ error: cause instanceof Error ? cause.message : String(cause) });
    }
  };

  return html`<h1>Message <code>${text(message.messageId)}</code></h1>
    <dl class="facts">
      <div><dt>Status</dt><dd><${StatusBadge} status=${message.status} /></dd></div>
      <div><dt>Topic</dt><dd>${text(message.topic)}</dd></div>
      <div><dt>Aggregate</dt><dd><a href=${aggregatePath(text(message.aggregateId))}>${text(message.aggregateId)}</a></dd></div>
      <div><dt>Created</dt><dd>${formatTime(message.createdAt)}</dd></div>
      ${message.orderKey === undefined ? null : html`<div><dt>Order key</dt><dd>${text(message.orderKey)} · seq ${text(message.seq)}</dd></div>`}
      <div><dt>Trace id</dt><dd>${traceparent === undefined ? 'none' : html`<code>${traceparent.split('-')[1] ?? traceparent}</code>`}</dd></div>
      ${message.schemaVersion === undefined ? null : html`<div><dt>Schema</dt><dd>${text(message.schemaVersion)}</dd></div>`}
    </dl>
    <p class="actions">
      <button type="button" disabled=${!statuses.some(canReplay)} title=${statuses.some(canReplay) ? undefined : 'nothing FAILED or CANCELLED to replay'} onClick=${() => setAction({ kind: 'replay' })}>Replay…</button>
      <button type="button" class="secondary" disabled=${!statuses.some(canCancel)} title=${statuses.some(canCancel) ? undefined : 'nothing PENDING or FAILED to cancel'} onClick=${() => setAction({ kind: 'cancel' })}>Cancel…</button>
      ${
        message.orderKey === undefined
          ? null
          : html`<button type="button" class="secondary" disabled=${!statuses.some(canSkip)} title=${statuses.some(canSkip) ? undefined : 'nothing PENDING, FAILED or CANCELLED to skip'} onClick=${() => setAction({ kind: 'skip' })}>Skip…</button>`
      }
      <button type="button" class="secondary" onClick=${() => page.reload()}>Refresh</button>
      ${live ? html`<span class="hint" role="status">a delivery is in flight: refreshed every ${LIVE_REFRESH_MS / 1000} s</span>` : null}
    </p>
    ${result === undefined ? null : html`<${Notice} kind="success">${result}<//>`}
    ${page.error === undefined ? null : html`<${Notice} kind="error">${page.error.message}<//>`}

    ${
      deliveries.length === 0
        ? html`<h2>Delivery</h2>
          <${DataTable} label="Delivery" head=${['Status', numeric('Attempts'), 'Outcome', 'Last error', 'Sent', 'Confirmed', 'Updated']}>
            <tr>${deliveryCells(message)}</tr>
          <//>`
        : html`<h2>Deliveries</h2>
          <${DataTable} label="Deliveries" head=${['Subscriber', 'Status', numeric('Attempts'), 'Outcome', 'Last error', 'Sent', 'Confirmed', 'Updated', 'Actions']}>
            ${deliveries.map(
              (delivery) => html`<tr data-subscriber=${delivery.subscriber}>
                <th scope="row">${delivery.subscriber}</th>
                ${deliveryCells(delivery.delivery)}
                <td class="row-actions">
                  <button type="button" class="small" disabled=${!canReplay(delivery.delivery.status)} aria-label=${`Replay ${delivery.subscriber}'s delivery`} onClick=${() => setAction({ kind: 'replay', subscriber: delivery.subscriber })}>Replay</button>
                  <button type="button" class="small secondary" disabled=${!canCancel(delivery.delivery.status)} aria-label=${`Cancel ${delivery.subscriber}'s delivery`} onClick=${() => setAction({ kind: 'cancel', subscriber: delivery.subscriber })}>Cancel</button>
                </td>
              </tr>`,
            )}
          <//>`
    }

    ${data.sequences.length === 0 ? null : html`<h2>Order key</h2>${sequenceTable(data.sequences)}`}

    <h2>Payload</h2>
    ${
      data.claimCheck === undefined
        ? html`<pre class="json" tabindex="0" aria-label="Payload">${JSON.stringify(message.payload, null, 2)}</pre>`
        : html`<p>
            Claim-checked: stored in <code>s3://${data.claimCheck.bucket}/${data.claimCheck.key}</code> (${data.claimCheck.size} bytes).
            <button type="button" class="secondary" onClick=${fetchPayload}>Fetch the payload</button>
          </p>
          ${payload?.error === undefined ? null : html`<${Notice} kind="error">${payload.error}<//>`}
          ${payload?.value === undefined ? null : html`<pre class="json" tabindex="0" aria-label="Payload">${JSON.stringify(payload.value, null, 2)}</pre>`}`
    }
    <h2>Headers</h2>
    <pre class="json" tabindex="0" aria-label="Headers">${JSON.stringify(headers, null, 2)}</pre>

    <h2>History</h2>
    ${
      deliveries.length === 0
        ? historyTable(data.history, undefined)
        : deliveries.map(
            (delivery) =>
              html`<h3>${delivery.subscriber}</h3>${historyTable(delivery.history, delivery.subscriber)}`,
          )
    }

    <h2>Audit trail</h2>
    ${
      data.audit.length === 0
        ? html`<p>No operator has acted on this message.</p>`
        : html`<${DataTable} label="Audit trail of the message" head=${['At', 'Action', 'Actor', 'Reason', 'Details']}>
          ${data.audit.map(
            (row) => html`<tr>
              <td>${formatTime(row.at)}</td>
              <td>${row.action}</td>
              <td>${row.actor}</td>
              <td>${row.reason}</td>
              <td class="details">${JSON.stringify(row.details)}</td>
            </tr>`,
          )}
        <//>`
    }
    ${
      action === undefined
        ? null
        : html`<${ActionDialog}
          ...${dialogOf(action, message, deliveries)}
          onSubmit=${(values: Readonly<Record<string, string>>) => act(action, values)}
          onClose=${() => setAction(undefined)}
        />`
    }`;
}

/** Whether a replay takes a delivery in `status` (FAILED or CANCELLED → PENDING). */
function canReplay(status: unknown): boolean {
  return status === 'FAILED' || status === 'CANCELLED';
}

/** Whether a cancel takes a delivery in `status` (PENDING or FAILED → CANCELLED). */
function canCancel(status: unknown): boolean {
  return status === 'PENDING' || status === 'FAILED';
}

/** Whether a skip takes a delivery in `status` (an ordering gap: PENDING, FAILED or CANCELLED). */
function canSkip(status: unknown): boolean {
  return status === 'PENDING' || status === 'FAILED' || status === 'CANCELLED';
}

/** What the dialog of `action` says and asks. */
function dialogOf(
  action: Action,
  message: Readonly<Record<string, unknown>>,
  deliveries: readonly { readonly subscriber: string }[],
): Omit<ActionDialogProps, 'onSubmit' | 'onClose'> {
  const id = text(message.messageId);
  if (action.kind === 'skip') {
    return {
      title: `Skip ${text(message.orderKey)} seq ${text(message.seq)}`,
      description: html`<p>
        Closes the ordering gap this message leaves: it is cancelled and never replayed, the consumers move past seq
        ${text(message.seq)} and apply the message after it.
      </p>`,
      confirmLabel: 'Skip',
      fields:
        deliveries.length === 0
          ? []
          : [
              {
                name: 'subscriber',
                label: 'Whose sequence (each subscriber has its own)',
                kind: 'select',
                initial: action.subscriber ?? deliveries[0]?.subscriber ?? '',
                options: deliveries.map((delivery) => ({
                  value: delivery.subscriber,
                  label: delivery.subscriber,
                })),
              },
            ],
    };
  }
  const replay = action.kind === 'replay';
  return {
    title: `${replay ? 'Replay' : 'Cancel'} ${id}`,
    description: html`<p>
      ${
        replay
          ? 'FAILED or CANCELLED → PENDING, attempts reset: the sweeper sends it within a minute. A CONFIRMED delivery is never sent again.'
          : 'PENDING or FAILED → CANCELLED: nothing sends it after that (a copy already in a queue may still be applied).'
      }
    </p>`,
    confirmLabel: replay ? 'Replay' : 'Cancel the message',
    fields:
      deliveries.length === 0
        ? []
        : [
            {
              name: 'subscriber',
              label: 'Deliveries',
              kind: 'select',
              initial: action.subscriber ?? '',
              options: [
                {
                  value: '',
                  label: replay ? 'every FAILED or CANCELLED delivery' : 'every PENDING or FAILED delivery',
                },
                ...deliveries.map((delivery) => ({
                  value: delivery.subscriber,
                  label: `only ${delivery.subscriber}'s`,
                })),
              ],
            },
          ],
  };
}

/** Whether one of the message's deliveries (or the message itself) is PENDING or SENT. */
function isInFlight(data: MessagePage): boolean {
  const statuses =
    data.deliveries === undefined || data.deliveries.length === 0
      ? [data.message.status]
      : data.deliveries.map((delivery) => delivery.delivery.status);
  return statuses.some((status) => status === 'PENDING' || status === 'SENT');
}

/** The delivery columns of a row: status, attempts, outcome, last error, times. */
function deliveryCells(row: Readonly<Record<string, unknown>>): VNode[] {
  return [
    html`<td><${StatusBadge} status=${row.status} /></td>`,
    html`<td class="num">${text(row.attempts)}</td>`,
    html`<td>${text(row.outcome)}</td>`,
    html`<td class="error-text">${text(row.lastError)}</td>`,
    html`<td>${formatTime(row.sentAt)}</td>`,
    html`<td>${formatTime(row.confirmedAt)}</td>`,
    html`<td>${formatTime(row.updatedAt)}</td>`,
  ];
}

function sequenceTable(sequences: readonly SequenceNeighbours[]): VNode {
  const link = (neighbour: SequencedMessage | undefined) =>
    neighbour === undefined
      ? 'none'
      : html`seq ${neighbour.seq}: <a href=${messagePath(neighbour.messageId)}>${neighbour.messageId}</a> <${StatusBadge} status=${neighbour.status} />`;
  return html`<${DataTable} label="Neighbours in the order key" head=${['Order key', numeric('Seq'), 'Before', 'After']}>
    ${sequences.map(
      (sequence) => html`<tr>
        <td>${sequence.orderKey}</td>
        <td class="num">${sequence.seq}</td>
        <td>${link(sequence.previous)}</td>
        <td>${link(sequence.next)}</td>
      </tr>`,
    )}
  <//>`;
}

function historyTable(history: readonly HistoryEntry[], subscriber: string | undefined): VNode {
  if (history.length === 0) return html`<p>No transitions recorded.</p>`;
  return html`<${DataTable} label=${subscriber === undefined ? 'History' : `History of ${subscriber}'s delivery`} head=${['At', 'Event', 'Change', 'By', 'Reason or outcome']}>
    ${history.map(
      (entry) => html`<tr>
        <td>${formatTime(entry.at)}</td>
        <td>${entry.event}</td>
        <td>${entry.from === undefined && entry.to === undefined ? '' : `${entry.from ?? ''} → ${entry.to ?? ''}`}</td>
        <td>${entry.by ?? ''}</td>
        <td>${entry.reason ?? entry.outcome ?? ''}</td>
      </tr>`,
    )}
  <//>`;
}

/** What a replay or cancel did, in a sentence. */
function describeResult(result: MessageActionResult): string {
  const verb = result.action === 'CANCEL' ? 'Cancelled' : 'Replayed';
  const deliveries = (result.deliveries ?? [])
    .map((delivery) =>
      delivery.to === undefined
        ? `${delivery.subscriber} left ${delivery.from} (${delivery.unchanged ?? ''})`
        : `${delivery.subscriber} ${delivery.from} → ${delivery.to}`,
    )
    .join('; ');
  return `${verb} ${result.messageId}${result.subscriber === undefined ? '' : ` (${result.subscriber})`}: ${result.from} → ${result.to} at ${formatTime(result.at)}, audit ${result.actionId}${deliveries === '' ? '' : `. ${deliveries}`}.`;
}
