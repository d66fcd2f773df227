/**
 * What the `outbox` CLI prints for people (its `--json` output is the admin core's own results). Pure
 * functions from results to text, so that each can be tested on its own.
 */

import type { AuditRow } from '../admin/audit-trail.ts';
import type { BulkReplayReport } from '../admin/bulk-replay.ts';
import type { EraseResult } from '../admin/erase-aggregate.ts';
import type { MessagePage } from '../admin/list-messages.ts';
import type { MessageActionResult } from '../admin/message-actions.ts';
import type { StartedMoveTask } from '../admin/move-task.ts';
import type { OutboxStats, TopicCounts } from '../admin/outbox-stats.ts';
import type { RedriveReport } from '../admin/redrive-dead-letters.ts';
import type { DeliveryDetails, MessageDetails } from '../admin/show-message.ts';
import type { SkipOrderGapResult } from '../admin/skip-order-gap.ts';
import type { SubscriberStats } from '../admin/subscriber-stats.ts';
import { DeadLetterCause } from '../consumer/dead-letter-cause.ts';
import type { RecoverReport } from './recover.ts';

/** Columns aligned with spaces, a header row first; cells are shown as they are. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `0s`, `42s`, `5m 03s`, `2h 10m`, `3d 4h`. */
export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** What a row without a subscriber (a message delivered to one queue) shows in the subscriber column. */
const NO_SUBSCRIBER = '(none)';

/**
 * Counts per topic and status, the oldest ages, the same per subscriber of each topic that has subscribers, and
 * each dead-letter queue's depth.
 */
export function formatStats(stats: OutboxStats): string {
  const counts = (row: TopicCounts) => [
    String(row.PENDING),
    String(row.SENT),
    String(row.FAILED),
    String(row.CANCELLED),
    formatAge(row.oldestPendingAgeSeconds),
    formatAge(row.oldestSentUnconfirmedAgeSeconds),
  ];
  const topics = Object.entries(stats.topics).map(([topic, row]) => [topic, ...counts(row)]);
  const { totals } = stats;
  const subscribed = new Set(
    stats.bySubscriber.filter((row) => row.subscriber !== undefined).map((row) => row.topic),
  );
  // A topic without subscribers is its row above; the rows of a topic with subscribers include its messages
  // delivered to one queue (written before it had subscribers), shown as such.
  const deliveries = stats.bySubscriber
    .filter((row) => subscribed.has(row.topic))
    .map((row) => [row.topic, row.subscriber ?? NO_SUBSCRIBER, ...counts(row)]);
  const queues = stats.deadLetterQueues.map((queue) => [
    queue.queueName,
    queue.topics.join(', '),
    String(queue.messages),
    String(queue.inFlight),
  ]);
  const columns = ['PENDING', 'SENT', 'FAILED', 'CANCELLED', 'OLDEST PENDING', 'OLDEST UNCONFIRMED'];
  return [
    `outbox at ${stats.at}${stats.subscriber === undefined ? '' : ` (the deliveries to ${stats.subscriber} only)`}`,
    '',
    formatTable(
      ['TOPIC', ...columns],
      [
        ...topics,
        [
          'total',
          String(totals.PENDING),
          String(totals.SENT),
          String(totals.FAILED),
          String(totals.CANCELLED),
          '',
          '',
        ],
      ],
    ),
    ...(deliveries.length === 0 ? [] : ['', formatTable(['TOPIC', 'SUBSCRIBER', ...columns], deliveries)]),
    '',
    queues.length === 0
      ? 'no dead-letter queues'
      : formatTable(['DEAD-LETTER QUEUE', 'TOPICS', 'MESSAGES', 'IN FLIGHT'], queues),
    ...(subscribed.size === 0
      ? []
      : [
          "a subscriber's queue and dead letters are in its own stack: outbox stats --stack <the subscriber's stack>",
        ]),
    '',
    `CONFIRMED is not counted: ${stats.notCounted.CONFIRMED}`,
  ].join('\n');
}

/** A subscriber's own stack: its queues' and dead-letter queues' depths, and its inboxes. */
export function formatSubscriberStats(stats: SubscriberStats): string {
  const queues = stats.queues.map((queue) => [
    queue.queueName,
    queue.topics.join(', '),
    String(queue.messages),
    String(queue.inFlight),
  ]);
  const deadLetters = stats.deadLetterQueues.map((queue) => [
    queue.queueName,
    queue.topics.join(', '),
    String(queue.messages),
    String(queue.inFlight),
  ]);
  const inboxes = stats.inboxes.map((inbox) => [inbox.table, inbox.topics.join(', ')]);
  return [
    `subscriber ${stats.subscriber} at ${stats.at}`,
    '',
    formatTable(['QUEUE', 'TOPICS', 'MESSAGES', 'IN FLIGHT'], queues),
    '',
    deadLetters.length === 0
      ? 'no dead-letter queues'
      : formatTable(['DEAD-LETTER QUEUE', 'TOPICS', 'MESSAGES', 'IN FLIGHT'], deadLetters),
    '',
    inboxes.length === 0 ? 'no inbox table' : formatTable(['INBOX TABLE', 'TOPICS'], inboxes),
    '',
    `the statuses of its deliveries are the producer's: outbox stats --subscriber ${stats.subscriber} on the producer's stack`,
  ].join('\n');
}

/**
 * A page of messages, and how to read the next one. A delivery to a subscriber is listed by its message's own id
 * with its subscriber (what replay, cancel and show take: `<id> --subscriber S`).
 */
export function formatMessagePage(page: MessagePage): string {
  const bySubscriber = page.items.some((item) => item.subscriber !== undefined);
  const rows = page.items.map((item) => [
    item.messageId,
    ...(bySubscriber ? [item.subscriber ?? NO_SUBSCRIBER] : []),
    item.status,
    item.topic,
    item.aggregateId,
    String(item.attempts),
    item.createdAt,
    oneLine(item.lastError ?? '', 60),
  ]);
  return [
    rows.length === 0
      ? 'no messages'
      : formatTable(
          [
            'MESSAGE ID',
            ...(bySubscriber ? ['SUBSCRIBER'] : []),
            'STATUS',
            'TOPIC',
            'AGGREGATE',
            'ATTEMPTS',
            'CREATED',
            'LAST ERROR',
          ],
          rows,
        ),
    ...(page.cursor === undefined ? [] : ['', `more: --cursor ${page.cursor}`]),
  ].join('\n');
}

/**
 * The stored message, its history and its audit rows; for a message delivered to subscribers, its status derived
 * from theirs, each delivery (status, attempts, outcome, times, last error) and each delivery's history.
 */
export function formatMessageDetails(details: MessageDetails): string {
  const { message } = details;
  const deliveries = details.deliveries ?? [];
  const fields = [
    'messageId',
    'subscriber',
    'status',
    'topic',
    'aggregateId',
    'orderKey',
    'seq',
    'attempts',
    'resends',
    'createdAt',
    'updatedAt',
    'sentAt',
    'confirmedAt',
    'nextAttemptAt',
    'lastError',
    'outcome',
  ].filter((field) => message[field] !== undefined);
  const width = Math.max(...fields.map((field) => field.length));
  const value = (field: string) =>
    field === 'status' && deliveries.length > 0
      ? `${String(message.status)} (from its ${deliveries.length} deliveries)`
      : String(message[field]);
  const histories =
    deliveries.length === 0
      ? [historyTable(details.history, 'history: none')]
      : deliveries.map(
          (delivery) =>
            `history of the delivery to ${delivery.subscriber}\n${historyTable(delivery.history, '  none')}`,
        );
  return [
    ...fields.map((field) => `${field.padEnd(width)}  ${value(field)}`),
    ...(deliveries.length === 0 ? [] : ['', 'deliveries', deliveriesTable(deliveries)]),
    '',
    'payload',
    indent(JSON.stringify(message.payload ?? null, null, 2)),
    '',
    histories.join('\n\n'),
    '',
    auditTable(details.audit),
  ].join('\n');
}

/** Each subscriber's delivery: its status, attempts, outcome, times and last error. */
function deliveriesTable(deliveries: readonly DeliveryDetails[]): string {
  const text = (value: unknown) => (value === undefined || value === null ? '' : String(value));
  return formatTable(
    ['SUBSCRIBER', 'STATUS', 'ATTEMPTS', 'OUTCOME', 'SENT', 'CONFIRMED', 'UPDATED', 'LAST ERROR'],
    deliveries.map(({ subscriber, delivery }) => [
      subscriber,
      text(delivery.status),
      text(delivery.attempts ?? 0),
      text(delivery.outcome),
      text(delivery.sentAt),
      text(delivery.confirmedAt),
      text(delivery.updatedAt),
      oneLine(text(delivery.lastError), 60),
    ]),
  );
}

function historyTable(history: MessageDetails['history'], none: string): string {
  const rows = history.map((entry) => [
    entry.at,
    entry.event,
    entry.from === undefined ? '' : `${entry.from} → ${entry.to ?? ''}`,
    entry.by ?? '',
    oneLine(entry.reason ?? entry.outcome ?? '', 60),
  ]);
  return rows.length === 0 ? none : formatTable(['AT', 'EVENT', 'CHANGE', 'BY', 'REASON / OUTCOME'], rows);
}

/** The audit rows, with the subscribers each acted on when any names one. */
function auditTable(audit: readonly AuditRow[]): string {
  if (audit.length === 0) return 'audit: none';
  const subscribersOf = (row: AuditRow): string => {
    const { details } = row;
    if (typeof details.subscriber === 'string') return details.subscriber;
    if (!Array.isArray(details.deliveries)) return '';
    return details.deliveries
      .map((delivery: unknown) => String((delivery as { subscriber?: unknown }).subscriber ?? ''))
      .join(', ');
  };
  const named = audit.some((row) => subscribersOf(row) !== '');
  return formatTable(
    ['AT', 'ACTION', 'ACTOR', ...(named ? ['SUBSCRIBER'] : []), 'REASON'],
    audit.map((row) => [
      row.at,
      row.action,
      row.actor,
      ...(named ? [subscribersOf(row)] : []),
      oneLine(row.reason, 60),
    ]),
  );
}

/**
 * `replayed 01HW… (order.created, order-17): FAILED → PENDING`; `replayed loyalty's delivery of 01HW… …` for one
 * subscriber's; for every delivery of a message, a line per delivery saying what became of it.
 */
export function formatActionResult(result: MessageActionResult): string {
  const verb = result.action === 'CANCEL' ? 'cancelled' : 'replayed';
  const what =
    result.subscriber === undefined
      ? result.messageId
      : `${result.subscriber}'s delivery of ${result.messageId}`;
  const deliveries = result.deliveries ?? [];
  const width = Math.max(0, ...deliveries.map((delivery) => delivery.subscriber.length));
  return [
    `${verb} ${what} (${result.topic}, ${result.aggregateId}): ${result.from} → ${result.to}` +
      ` at ${result.at}, audit ${result.actionId}`,
    ...deliveries.map((delivery) =>
      delivery.to === undefined
        ? `  ${delivery.subscriber.padEnd(width)}  left as it is: ${delivery.unchanged ?? delivery.from}`
        : `  ${delivery.subscriber.padEnd(width)}  ${delivery.from} → ${delivery.to}`,
    ),
  ].join('\n');
}

/** What a bulk replay did, or would do in a dry run. */
export function formatBulkReplay(report: BulkReplayReport): string {
  if (report.dryRun) {
    const candidates = report.wouldReplay ?? [];
    const bySubscriber = candidates.some((c) => c.subscriber !== undefined);
    const rows = candidates.map((c) => [
      c.messageId,
      ...(bySubscriber ? [c.subscriber ?? NO_SUBSCRIBER] : []),
      c.status,
      c.createdAt,
    ]);
    return [
      `dry run: would replay ${report.total} message(s)`,
      ...(rows.length === 0
        ? []
        : [
            '',
            formatTable(['MESSAGE ID', ...(bySubscriber ? ['SUBSCRIBER'] : []), 'STATUS', 'CREATED'], rows),
          ]),
    ].join('\n');
  }
  return [
    `replayed ${report.replayed} of ${report.total} (skipped ${report.skipped}, failed ${report.failed})` +
      (report.bulkId === undefined ? '' : `, run ${report.bulkId}`),
    ...report.problems.map(
      (problem) =>
        `  ${problem.messageId}${problem.subscriber === undefined ? '' : ` (${problem.subscriber})`}: ${problem.error}`,
    ),
  ].join('\n');
}

/** What a redrive moved, per dead-letter queue. */
export function formatRedrive(report: RedriveReport): string {
  const rows = report.queues.map((queue) => [
    lastSegment(queue.deadLetterQueueUrl),
    lastSegment(queue.sourceQueueUrl),
    String(queue.examined),
    String(queue.matched),
    String(report.dryRun ? 0 : queue.moved),
    String(queue.resumed),
    String(queue.left),
  ]);
  const wouldMove = report.queues.flatMap((queue) =>
    (queue.wouldMove ?? []).map((info) => [
      lastSegment(queue.deadLetterQueueUrl),
      info.sqsMessageId,
      info.messageId ?? '(none)',
      info.topic ?? '',
      info.cause,
      info.receives === undefined ? '' : String(info.receives),
    ]),
  );
  return [
    report.dryRun
      ? `dry run: would move ${report.matched} of ${report.examined} dead letter(s)`
      : `moved ${report.moved} dead letter(s) back (${report.resumed} resumed from an interrupted run, ${report.left} left)`,
    ...formatCauses(report.causes),
    ...(rows.length === 0
      ? []
      : [
          '',
          formatTable(['DEAD-LETTER QUEUE', 'TO', 'EXAMINED', 'MATCHED', 'MOVED', 'RESUMED', 'LEFT'], rows),
        ]),
    ...(wouldMove.length === 0
      ? []
      : [
          '',
          formatTable(
            ['DEAD-LETTER QUEUE', 'SQS MESSAGE ID', 'MESSAGE ID', 'TOPIC', 'CAUSE', 'RECEIVES'],
            wouldMove,
          ),
        ]),
  ].join('\n');
}

/**
 * The dead letters chosen, by why they were there; one line on REDRIVE_POLICY when there are some, since they carry
 * no reason of the consumer's.
 */
function formatCauses(causes: Readonly<Record<string, number>>): string[] {
  const entries = Object.entries(causes).filter(([, count]) => count > 0);
  if (entries.length === 0) return [];
  const lines = [`by cause: ${entries.map(([cause, count]) => `${count} ${cause}`).join(', ')}`];
  if ((causes[DeadLetterCause.REDRIVE_POLICY] ?? 0) > 0) {
    lines.push(
      `  ${DeadLetterCause.REDRIVE_POLICY}: moved by the queue's redrive policy, without a reason, after maxReceiveCount ` +
        'receives the consumer never finished (invocations stopped at their timeout or crashed): check the ' +
        "consumer's duration and errors before moving them back",
    );
  }
  return lines;
}

/** The SQS message move tasks started. */
export function formatMoveTasks(tasks: readonly StartedMoveTask[]): string {
  return [
    `started ${tasks.length} SQS message move task(s); SQS moves the messages in the background`,
    ...tasks.map(
      (task) =>
        `  ${lastSegment(task.deadLetterQueueUrl)} → ${lastSegment(task.sourceQueueUrl)}: ${task.taskHandle}`,
    ),
  ].join('\n');
}

/** What an erase removed. */
export function formatErase(result: EraseResult): string {
  return [
    `erased aggregate ${result.aggregateId}: ${result.messagesDeleted} message(s), ${result.parkedRowsDeleted} parked row(s), ${result.claimCheckObjectsDeleted} stored payload(s); audit ${result.actionId} (consumers keep their dedupe rows until they expire)`,
    ...(result.claimCheckObjectsNotDeleted.length === 0
      ? []
      : [
          `could not delete ${result.claimCheckObjectsNotDeleted.length} stored payload(s); delete them by hand: ${result.claimCheckObjectsNotDeleted.join(', ')}`,
        ]),
    ...(result.skippedInFlight.length === 0
      ? []
      : [
          `kept ${result.skippedInFlight.length} message(s) that started a delivery meanwhile (erase again once confirmed): ${result.skippedInFlight.join(', ')}`,
        ]),
    ...result.erasesSent.map(
      (sent) =>
        `  subscriber ${sent.subscriber}: sent ${sent.topic} ${sent.messageId}; its consumer deletes its parked copies, and its receipt confirms it ERASED (show ${sent.messageId}#${sent.subscriber})`,
    ),
  ].join('\n');
}

/** What a skip did: the message cancelled, each consumer's cursor, the successor resent. */
export function formatSkipOrderGap(result: SkipOrderGapResult): string {
  const head = result.gone
    ? `${result.orderKey} seq ${result.seq} (no longer in the outbox, ${result.topic})`
    : `${result.orderKey} seq ${result.seq} (message ${result.messageId ?? ''}, ${result.topic})`;
  const lines = [
    result.changed
      ? `skipped ${head}; audit ${result.actionId ?? ''}`
      : `nothing to do for ${head}: already skipped`,
    result.gone
      ? '  message   gone (expired after its cancel, or erased): nothing to cancel'
      : result.cancelled
        ? `  message   ${result.from} → CANCELLED`
        : '  message   already CANCELLED',
    ...result.cursors.map((cursor) =>
      cursor.outcome === 'MOVED'
        ? `  consumer  ${cursor.inboxTable}: cursor ${cursor.lastSeq ?? 'none'} → ${result.seq}`
        : `  consumer  ${cursor.inboxTable}: already at seq ${cursor.lastSeq ?? 'none'}, nothing to do`,
    ),
    ...(result.skipSent === undefined
      ? []
      : [
          `  consumer  subscriber ${result.skipSent.subscriber}: sent ${result.skipSent.topic} ${result.skipSent.messageId}; its receipt confirms it SKIPPED, ALREADY_PAST or EARLIER_GAP (show ${result.skipSent.messageId}#${result.skipSent.subscriber})`,
        ]),
  ];
  const next = result.successor;
  const what: Readonly<Record<string, string>> = {
    PENDING: 'the sweeper sends it when it is due',
    FAILED: 'replay it, or the consumers hold the rest of the sequence',
    CANCELLED: 'skip it too, or replay it',
  };
  if (next === undefined) lines.push(`  next      no seq ${result.seq + 1} yet`);
  else {
    const about = `seq ${next.seq} (message ${next.messageId})`;
    lines.push(
      next.action === 'RESENT'
        ? `  next      ${about} SENT → PENDING: the sweeper sends it again`
        : next.action === 'DUE_NOW'
          ? `  next      ${about} PENDING, held back behind the gap: due now`
          : `  next      ${about} is ${next.status}: ${what[next.status] ?? 'nothing to do'}`,
    );
  }
  return lines.join('\n');
}

/** The runbook's steps and what remains unresolved. */
export function formatRecover(report: RecoverReport): string {
  const { health, replay, redrive, wait, unresolved } = report;
  const lines = [
    `recover ${report.topic}${report.subscriber === undefined ? '' : ` (subscriber ${report.subscriber})`}`,
    `  1. downstream  ${health.checked ? (health.healthy ? 'healthy' : 'UNHEALTHY') : 'not checked'}: ${health.detail}`,
  ];
  if (report.outcome === 'UNHEALTHY') {
    lines.push('  stopped: fix the downstream first, then run recover again (nothing was replayed or moved)');
    return lines.join('\n');
  }
  lines.push(
    replay === undefined
      ? '  2. replay      no FAILED messages'
      : `  2. replay      ${replay.replayed} of ${replay.total} FAILED message(s) replayed (skipped ${replay.skipped}, failed ${replay.failed})`,
    redrive === undefined
      ? '  3. redrive     no dead letters of the topic here'
      : `  3. redrive     ${redrive.moved + redrive.resumed} dead letter(s) moved back to the topic's queue`,
    ...((report.subscribersElsewhere ?? []).length === 0
      ? []
      : [
          `                the dead letters of ${(report.subscribersElsewhere ?? []).join(', ')} are in their own stacks: ` +
            `outbox redrive --stack <its stack> --topic ${report.topic} --reason <why>`,
        ]),
    wait.tracked === 0
      ? '  4. wait        nothing to wait for'
      : `  4. wait        ${wait.confirmed} of ${wait.tracked} CONFIRMED after ${wait.waitedSeconds}s` +
          (wait.timedOut ? ' (gave up waiting)' : ''),
  );
  const remaining = [
    ...unresolved.messages.map(
      (message) => `  message ${message.messageId} is ${message.status} (${message.step})`,
    ),
    ...(unresolved.failed === 0 ? [] : [`  ${unresolved.failed} FAILED message(s) of the topic`]),
    ...unresolved.deadLetterQueues
      .filter((queue) => queue.messages + queue.inFlight > 0)
      .map(
        (queue) =>
          `  ${queue.messages + queue.inFlight} message(s) in dead-letter queue ${queue.queueName}` +
          (queue.inFlight > 0 ? ` (${queue.inFlight} in flight)` : ''),
      ),
  ];
  lines.push(
    remaining.length === 0
      ? '  5. result      resolved: nothing remains'
      : `  5. result      UNRESOLVED:\n${remaining.map((line) => `  ${line}`).join('\n')}`,
  );
  return lines.join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

function lastSegment(url: string): string {
  return url.split('/').filter(Boolean).at(-1) ?? url;
}
