/**
 * Dead letters (`/dead-letters`): each dead-letter queue the console reaches — the producer's and each
 * subscriber's, in its own stack — with its depth; a peek at its messages with why each is there and a link to the
 * outbox message; a redrive (all, or one topic's) with its progress.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import type { DeadLetterInfo } from '../../../admin/redrive-dead-letters.ts';
import type { JobSnapshot } from '../bulk-jobs.ts';
import type { DeadLetterOwner, DeadLetterQueueView } from '../dead-letter-queues.ts';
import { ActionDialog } from './action-dialog.ts';
import { postJson } from './api.ts';
import { formatCount, messagePath } from './format.ts';
import { JobPanel, mergeJobs } from './job-panel.ts';
import { DataTable, LoadState, Notice, numeric } from './page-parts.ts';
import { useResource } from './use-resource.ts';

const REFRESH_MS = 5_000;

/** The dead-letters view. */
export function DeadLettersView(): VNode {
  const queues = useResource<{ owners: DeadLetterOwner[] }>('/dead-letters', { refreshMs: REFRESH_MS });
  const jobs = useResource<{ jobs: JobSnapshot[] }>('/jobs', { refreshMs: REFRESH_MS });
  const [started, setStarted] = useState<JobSnapshot[]>([]);
  const [redriving, setRedriving] = useState<DeadLetterQueueView | undefined>(undefined);
  const [peeks, setPeeks] = useState<Record<string, { messages?: DeadLetterInfo[]; error?: string }>>({});
  const redrives = mergeJobs(started, jobs.data?.jobs ?? []).filter((job) => job.kind === 'redrive');

  const peek = async (queue: DeadLetterQueueView) => {
    try {
      const { messages } = await postJson<{ messages: DeadLetterInfo[] }>('/dead-letters/peek', {
        queueUrl: queue.queueUrl,
        max: 20,
      });
      setPeeks((previous) => ({ ...previous, [queue.queueUrl]: { messages } }));
    } catch (cause) {
      setPeeks((previous) => ({
        ...previous,
        [queue.queueUrl]: { error: cause instanceof Error ? cause.message : String(cause) },
      }));
    }
  };
  const redrive = async (queue: DeadLetterQueueView, values: Readonly<Record<string, string>>) => {
    const { job } = await postJson<{ job: JobSnapshot }>('/dead-letters/redrive', {
      queueUrl: queue.queueUrl,
      reason: values.reason,
      ratePerSecond: Number(values.rate),
      ...(values.topic === '' || values.topic === undefined ? {} : { topic: values.topic }),
    });
    setStarted((previous) => [job, ...previous]);
  };

  const owners = (queues.data?.owners ?? []).filter(
    (owner) => owner.queues.length > 0 || owner.problem !== undefined,
  );
  return html`<h1>Dead letters</h1>
    <${LoadState} error=${queues.error} loading=${queues.loading && queues.data === undefined} />
    ${
      redrives.length === 0
        ? null
        : html`<section aria-labelledby="redrives-title">
          <h2 id="redrives-title">Redrives</h2>
          ${redrives.map((job) => html`<${JobPanel} key=${job.id} job=${job} onEnded=${queues.reload} />`)}
        </section>`
    }
    ${owners.map(
      (owner) => html`<section class="owner" aria-labelledby=${`owner-${owner.owner}`}>
        <h2 id=${`owner-${owner.owner}`}>
          ${owner.subscriber === undefined ? 'Producer' : `Subscriber ${owner.subscriber}`}
          ${owner.stackName === undefined ? null : html`<span class="meta"> · stack ${owner.stackName}</span>`}
        </h2>
        ${owner.problem === undefined ? null : html`<${Notice} kind="error">${owner.problem}<//>`}
        ${owner.queues.map(
          (queue) => html`<div class="queue" data-queue=${queue.queueName}>
            <h3>${queue.queueName}</h3>
            <p>
              <b class=${queue.messages > 0 ? 'alert' : ''}>${formatCount(queue.messages)}</b> messages,${' '}
              ${formatCount(queue.inFlight)} in flight · topics ${queue.topics.join(', ')}
            </p>
            <p class="actions">
              <button type="button" class="secondary" aria-label=${`Peek at ${queue.queueName}`} onClick=${() => peek(queue)}>Peek</button>
              <button type="button" aria-label=${`Redrive ${queue.queueName}`} onClick=${() => setRedriving(queue)}>Redrive…</button>
            </p>
            ${peekTable(queue, peeks[queue.queueUrl])}
          </div>`,
        )}
      </section>`,
    )}
    ${queues.data !== undefined && owners.length === 0 ? html`<p>No dead-letter queue is reachable.</p>` : null}
    ${
      redriving === undefined
        ? null
        : html`<${ActionDialog}
          title=${`Redrive ${redriving.queueName}`}
          description=${html`<p>
            Moves its messages back to their queue, journalled so that a redrive stopped and started again moves each
            one once. The consumer applies each once (its inbox drops a copy it has applied).
          </p>`}
          confirmLabel="Redrive"
          fields=${[
            {
              name: 'topic',
              label: 'Messages',
              kind: 'select',
              initial: '',
              options: [
                { value: '', label: 'every message' },
                ...redriving.topics.map((topic) => ({ value: topic, label: `only ${topic}` })),
              ],
            },
            {
              name: 'rate',
              label: 'Messages per second',
              kind: 'number',
              initial: '10',
              hint: 'at most 1000',
            },
          ]}
          onSubmit=${(values: Readonly<Record<string, string>>) => redrive(redriving, values)}
          onClose=${() => {
            setRedriving(undefined);
            queues.reload();
          }}
        />`
    }`;
}

function peekTable(
  queue: DeadLetterQueueView,
  peek: { messages?: DeadLetterInfo[]; error?: string } | undefined,
): VNode | null {
  if (peek === undefined) return null;
  if (peek.error !== undefined) return html`<${Notice} kind="error">${peek.error}<//>`;
  const messages = peek.messages ?? [];
  if (messages.length === 0) return html`<p role="status">Nothing to peek at: the queue is empty.</p>`;
  return html`<${DataTable} label=${`Messages of ${queue.queueName}`} head=${['Outbox message', 'Topic', 'Why', 'Last error', numeric('Receives')]}>
    ${messages.map(
      (message) => html`<tr>
        <td>${message.messageId === undefined ? '(not an outbox message)' : html`<a href=${messagePath(message.messageId)}>${message.messageId}</a>`}</td>
        <td>${message.topic ?? ''}</td>
        <td>${message.cause}</td>
        <td class="error-text">${message.lastError ?? ''}</td>
        <td class="num">${message.receives ?? ''}</td>
      </tr>`,
    )}
  <//>`;
}
