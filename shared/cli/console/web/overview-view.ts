/**
 * Overview (`/`): the pipeline — the writer, the relay and sweeper, the queues, the subscribers — with its counts,
 * the oldest PENDING and unconfirmed ages, dead-letter depths and ordering gaps, read again every few seconds.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import type { TopicCounts } from '../../../admin/outbox-stats.ts';
import type { Overview, SubscriberOverview } from '../overview.ts';
import { formatAge, formatCount, formatTime, messagePath } from './format.ts';
import { DataTable, LoadState, Notice, numeric, StatusBadge } from './page-parts.ts';
import { useResource } from './use-resource.ts';

/** The count columns of the topic and subscriber tables. */
const COUNT_HEADS = ['PENDING', 'SENT', 'FAILED', 'CANCELLED', 'Oldest PENDING', 'Oldest unconfirmed'].map(
  numeric,
);

/** How often the overview is read again. */
const REFRESH_MS = 5_000;

/** The overview. */
export function OverviewView(): VNode {
  const { data, error, loading } = useResource<Overview>('/overview', { refreshMs: REFRESH_MS });
  if (data === undefined) return html`<h1>Overview</h1><${LoadState} error=${error} loading=${loading} />`;
  const { stats } = data;
  const subscriberDeadLetters = data.subscribers.flatMap((subscriber) =>
    (subscriber.stats?.deadLetterQueues ?? []).map((queue) => ({ ...queue, owner: subscriber.subscriber })),
  );
  const deadLetters = [
    ...stats.deadLetterQueues.map((queue) => ({ ...queue, owner: data.stackName })),
    ...subscriberDeadLetters,
  ];
  const deadLettered = deadLetters.reduce((sum, queue) => sum + queue.messages, 0);
  const oldestPending = Math.max(
    0,
    ...Object.values(stats.topics).map((topic) => topic.oldestPendingAgeSeconds),
  );
  const oldestUnconfirmed = Math.max(
    0,
    ...Object.values(stats.topics).map((topic) => topic.oldestSentUnconfirmedAgeSeconds),
  );
  return html`<h1>Overview</h1>
    <p class="meta">
      Outbox <b>${data.outboxName ?? data.stackName}</b> in stack <b>${data.stackName}</b> · read ${formatTime(data.at)} ·
      refreshed every ${REFRESH_MS / 1000} s
    </p>
    ${error === undefined ? null : html`<${Notice} kind="error">Could not refresh: ${error.message}<//>`}
    <ol class="pipeline" aria-label="The pipeline, from the writer to the subscribers">
      <li class="stage">
        <h2>Writer</h2>
        <p class="big"><b>${formatCount(stats.totals.PENDING)}</b> PENDING</p>
        <p>oldest ${formatAge(oldestPending)}</p>
        <p class="hint">written in the business transaction, waiting for the relay</p>
      </li>
      <li class="stage">
        <h2>Relay and sweeper</h2>
        <p class="big"><b>${formatCount(stats.totals.SENT)}</b> SENT, unconfirmed</p>
        <p>oldest ${formatAge(oldestUnconfirmed)}</p>
        <p>
          <a href="/failures" class=${stats.totals.FAILED > 0 ? 'alert' : ''}><b>${formatCount(stats.totals.FAILED)}</b> FAILED</a>${' '}
          · ${formatCount(stats.totals.CANCELLED)} CANCELLED
        </p>
      </li>
      <li class="stage">
        <h2>Queues</h2>
        ${queueLines(data.subscribers)}
        <p>
          <a href="/dead-letters" class=${deadLettered > 0 ? 'alert' : ''}><b>${formatCount(deadLettered)}</b> ${deadLettered === 1 ? 'dead letter' : 'dead letters'}</a>
        </p>
      </li>
      <li class="stage">
        <h2>Subscribers</h2>
        ${
          data.subscribers.length === 0
            ? html`<p>none: every topic goes to one queue</p>`
            : html`<ul class="plain">
              ${data.subscribers.map((subscriber) => subscriberLine(subscriber, stats.bySubscriber))}
            </ul>`
        }
        <p>
          <a href="#gaps" class=${data.gaps.count > 0 ? 'alert' : ''}><b>${formatCount(data.gaps.count)}</b> ${data.gaps.count === 1 ? 'ordering gap' : 'ordering gaps'}</a>
        </p>
      </li>
    </ol>

    <h2>By topic</h2>
    <${DataTable} label="Counts by topic" head=${['Topic', ...COUNT_HEADS]}>
      ${Object.entries(stats.topics).map(([topic, counts]) =>
        countRow([html`<a href=${`/messages?topic=${encodeURIComponent(topic)}`}>${topic}</a>`], counts),
      )}
    <//>
    ${
      stats.bySubscriber.some((row) => row.subscriber !== undefined)
        ? html`<h2>By subscriber</h2>
          <${DataTable} label="Counts by topic and subscriber" head=${['Topic', 'Subscriber', ...COUNT_HEADS]}>
            ${stats.bySubscriber.map((row) =>
              countRow(
                [
                  html`${row.topic}`,
                  row.subscriber === undefined
                    ? html`(none)`
                    : html`<a href=${`/messages?subscriber=${encodeURIComponent(row.subscriber)}&topic=${encodeURIComponent(row.topic)}`}>${row.subscriber}</a>`,
                ],
                row,
              ),
            )}
          <//>`
        : null
    }

    <h2>Dead-letter queues</h2>
    ${
      deadLetters.length === 0
        ? html`<p>No dead-letter queue is reachable.</p>`
        : html`<${DataTable} label="Dead-letter queues" head=${['Queue', 'Whose', 'Topics', numeric('Messages'), numeric('In flight')]}>
          ${deadLetters.map(
            (queue) => html`<tr>
              <td><a href="/dead-letters">${queue.queueName}</a></td>
              <td>${queue.owner}</td>
              <td>${queue.topics.join(', ')}</td>
              <td class=${queue.messages > 0 ? 'num alert' : 'num'}>${formatCount(queue.messages)}</td>
              <td class="num">${formatCount(queue.inFlight)}</td>
            </tr>`,
          )}
        <//>`
    }

    <h2 id="gaps">Ordering gaps</h2>
    ${
      data.gaps.count === 0
        ? html`<p>None: no message of an ordered topic is FAILED or CANCELLED without being skipped.</p>`
        : html`<p>
            A FAILED or CANCELLED message of an ordered topic holds back every later message of its order key: replay
            it, or skip it (<code>outbox skip --order-key K --seq N</code>).
          </p>
          <${DataTable} label="Ordering gaps" head=${['Order key', numeric('Seq'), 'Status', 'Message', 'Held back']}>
            ${data.gaps.gaps.map(
              (gap) => html`<tr>
                <td>${gap.orderKey}</td>
                <td class="num">${gap.seq}</td>
                <td><${StatusBadge} status=${gap.status} /></td>
                <td><a href=${messagePath(gap.messageId)}>${gap.messageId}</a>${gap.subscriber === undefined ? '' : ` (${gap.subscriber})`}</td>
                <td>${gap.next === undefined ? 'nothing yet' : html`seq ${gap.next.seq}: <a href=${messagePath(gap.next.messageId)}>${gap.next.messageId}</a> <${StatusBadge} status=${gap.next.status} />`}</td>
              </tr>`,
            )}
          <//>`
    }
    ${
      data.notes.length === 0
        ? null
        : html`<h2>Notes</h2><ul>${data.notes.map((note) => html`<li>${note}</li>`)}</ul>`
    }
    <p class="hint">CONFIRMED is not counted: CONFIRMED messages are in no index but byAggregate.</p>`;
}

/** The lines of the queues stage: each subscriber's queue depth. */
function queueLines(subscribers: readonly SubscriberOverview[]): VNode {
  const queues = subscribers.flatMap((subscriber) =>
    (subscriber.stats?.queues ?? []).map((queue) => ({ ...queue, subscriber: subscriber.subscriber })),
  );
  if (queues.length === 0) return html`<p>no subscriber queue reachable</p>`;
  return html`<ul class="plain">
    ${queues.map(
      (queue) =>
        html`<li><b>${queue.subscriber}</b>: ${formatCount(queue.messages)} waiting, ${formatCount(queue.inFlight)} in flight</li>`,
    )}
  </ul>`;
}

/** A subscriber on the pipeline: its FAILED deliveries, or why its stack cannot be read. */
function subscriberLine(subscriber: SubscriberOverview, rows: Overview['stats']['bySubscriber']): VNode {
  const own = rows.filter((row) => row.subscriber === subscriber.subscriber);
  const failed = own.reduce((sum, row) => sum + row.FAILED, 0);
  const inFlight = own.reduce((sum, row) => sum + row.PENDING + row.SENT, 0);
  return html`<li>
    <b>${subscriber.subscriber}</b>:${' '}
    <a href=${`/messages?status=FAILED&subscriber=${encodeURIComponent(subscriber.subscriber)}`} class=${failed > 0 ? 'alert' : ''}>${formatCount(failed)} FAILED</a>,
    ${' '}${formatCount(inFlight)} in flight
    ${subscriber.problem === undefined ? null : html`<p class="problem">${subscriber.problem}</p>`}
  </li>`;
}

function countRow(first: readonly VNode[], counts: TopicCounts): VNode {
  return html`<tr>
    ${first.map((cell) => html`<td>${cell}</td>`)}
    <td class="num">${formatCount(counts.PENDING)}</td>
    <td class="num">${formatCount(counts.SENT)}</td>
    <td class=${counts.FAILED > 0 ? 'num alert' : 'num'}>${formatCount(counts.FAILED)}</td>
    <td class="num">${formatCount(counts.CANCELLED)}</td>
    <td class="num">${formatAge(counts.oldestPendingAgeSeconds)}</td>
    <td class="num">${formatAge(counts.oldestSentUnconfirmedAgeSeconds)}</td>
  </tr>`;
}
