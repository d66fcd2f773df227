/**
 * Aggregate (`/aggregates/{aggregateId}`): every message of one business id in the order they were written, and
 * the erase of them (a data-protection request), which asks for a reason and the id typed again.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { EraseResult } from '../../../admin/erase-aggregate.ts';
import type { AggregatePage } from '../aggregate-page.ts';
import { ActionDialog } from './action-dialog.ts';
import { postJson } from './api.ts';
import { formatTime, messagePath, plural } from './format.ts';
import { DataTable, LoadState, Notice, StatusBadge } from './page-parts.ts';
import type { PageLocation } from './router.ts';
import { useResource } from './use-resource.ts';

/** The aggregate view. */
export function AggregateView({
  aggregateId,
  location,
}: {
  readonly aggregateId: string;
  readonly location: PageLocation;
}): VNode {
  const page = useResource<AggregatePage>(`/aggregates/${encodeURIComponent(aggregateId)}`);
  const [erasing, setErasing] = useState(false);
  const [result, setResult] = useState<EraseResult | undefined>(undefined);
  const orderKey = location.query.get('orderKey');
  const erase = async (values: Readonly<Record<string, string>>) => {
    setResult(
      await postJson<EraseResult>(`/aggregates/${encodeURIComponent(aggregateId)}/erase`, {
        reason: values.reason,
        confirm: values.confirm,
      }),
    );
    page.reload();
  };
  return html`<h1>Aggregate <code>${aggregateId}</code></h1>
    ${orderKey === null ? null : html`<p class="meta">Found by its order key <code>${orderKey}</code>.</p>`}
    <${LoadState} error=${page.error} loading=${page.loading && page.data === undefined} />
    ${
      page.data === undefined
        ? null
        : html`<p class="meta">${plural(page.data.messages.length, 'message')}, oldest first${page.data.truncated ? ' (the oldest only: there are more)' : ''}</p>
          <${DataTable} label="Messages of the aggregate" head=${['Created', 'Message', 'Topic', 'Status', 'Deliveries']}>
            ${page.data.messages.map(
              (message) => html`<tr>
                <td>${formatTime(message.createdAt)}</td>
                <td><a href=${messagePath(message.messageId)}>${message.messageId}</a></td>
                <td>${message.topic}</td>
                <td><${StatusBadge} status=${message.status} /></td>
                <td>
                  ${message.deliveries.map(
                    (delivery) =>
                      html`<span class="delivery">${delivery.subscriber ?? 'queue'} <${StatusBadge} status=${delivery.status} /></span> `,
                  )}
                </td>
              </tr>`,
            )}
          <//>`
    }
    ${
      result === undefined
        ? null
        : html`<${Notice} kind="success">
          Erased ${plural(result.messagesDeleted, 'message')}, ${plural(result.parkedRowsDeleted, 'parked row')} and${' '}
          ${plural(result.claimCheckObjectsDeleted, 'stored payload')}; audit ${result.actionId}.
          ${result.erasesSent.length === 0 ? '' : ` Erase requests sent to ${result.erasesSent.map((sent) => sent.subscriber).join(', ')}.`}
          ${result.skippedInFlight.length === 0 ? '' : ` Kept (in flight): ${result.skippedInFlight.join(', ')}.`}
        <//>`
    }
    <h2>Erase</h2>
    <p>
      A data-protection request: deletes the aggregate's messages and their stored payloads, and asks each subscriber
      to delete its parked copies. Refused while one of its messages is PENDING or SENT.
    </p>
    <button type="button" class="danger" onClick=${() => setErasing(true)}>Erase ${aggregateId}…</button>
    ${
      erasing
        ? html`<${ActionDialog}
          title=${`Erase aggregate ${aggregateId}`}
          description=${html`<p>This cannot be undone. The audit row keeps who, when and why, never the payload.</p>`}
          confirmLabel="Erase"
          confirmText=${aggregateId}
          onSubmit=${erase}
          onClose=${() => setErasing(false)}
        />`
        : null
    }`;
}
