import { HistoryEvent, MessageStatus, parseEnvelope } from '../../../shared/index.ts';
import {
  DeadLetterCause,
  historyOf,
  MESSAGE_ATTRIBUTES,
  OutboxMetricName,
  readDeadLetter,
  UNKNOWN_TOPIC,
} from '../../../shared/memory/index.ts';
import type { DeadLetterCopy, DrillSnapshot } from './drill-snapshot.ts';
import { SUBSCRIBERS } from './drill-subscribers.ts';
import { isAppliedOutcome } from './inbox-outcomes.ts';
import { type InvariantResult, verdict } from './invariant-result.ts';
import type { CountedMetric, DrillMetrics } from './observed-metrics.ts';
import type { ReceiptCountsTotal } from './receipt-tally.ts';
import type { UnreportedCommitCounts } from './unreported-commits.ts';

/** What the drill observed besides the tables: the metrics, the inbox rows no metric can count, the receipts. */
export interface MetricObservations {
  readonly metrics: DrillMetrics;
  /**
   * Per subscriber, inbox rows committed by a delivery that then threw (at its receipt, an injected crash or a real
   * error, or at the drain of its parked successors after it): a delivery that throws returns no counts.
   */
  readonly unreportedCommits: Readonly<Record<string, UnreportedCommitCounts>>;
  /** What the producer's receipts function found for the receipts it applied. */
  readonly receiptsApplied: ReceiptCountsTotal;
}

/** What a subscriber's tables say, per topic, that its consumer's metrics can be held to. */
interface ConsumerFigures {
  deadLetters: number;
  appliedRows: number;
  rejectedRows: number;
}

/** What the outbox says, per topic, that the senders' metrics can be held to. */
interface SendFigures {
  failed: number;
  sentTransitions: number;
  /** Inbox rows of the topic at every subscriber: each was applied from a copy a sender handed to SQS. */
  inboxRows: number;
}

/**
 * Holds the metrics the functions would have published to the tables, per topic and, for the consumers, per
 * subscriber. Exact where each count is taken right after the write it counts succeeded and the invocation returns
 * it (nothing after the write can throw):
 * - MessagesFailed = transitions to FAILED in the deliveries' histories (a FAILED delivery whose earlier copy is then
 *   applied moves on to CONFIRMED; a row the sweeper could not read at all is counted under `(unknown)`, and is
 *   recognised by its FAILED transition, the only one written without a `from`);
 * - DeadLettered = copies in the subscriber's dead-letter queue that carry its consumer's reason (SQS's own redrive
 *   adds none);
 * - MessagesApplied + unreported applied commits = applied inbox rows at the subscriber, and BusinessRejections +
 *   unreported rejections = its other inbox rows: a delivery that commits and then fails (at its receipt, or at the
 *   drain of an ordered key's parked successors) returns no counts (at-least-once), and its redelivery counts a
 *   duplicate;
 * - the receipts function's CONFIRMED = deliveries whose confirmation a receipt wrote.
 * Bounds where a send's count and its mark can part:
 * - MessagesSent ≤ SENT transitions (a delivery is marked SENT just before its send: each accepted send follows its
 *   own mark, while a mark whose send SQS refused, or whose sender stopped before sending, counts no send), and
 *   MessagesSent ≥ inbox rows at every subscriber (every applied copy was an accepted send), and RetriesScheduled ≤
 *   SendFailures (each follows one failed send).
 */
export function checkMetrics(snapshot: DrillSnapshot, observed: MetricObservations): InvariantResult[] {
  const exact: string[] = [];
  const bounds: string[] = [];
  const exactDetail: string[] = [];
  const boundDetail: string[] = [];
  const sends = sendFigures(snapshot);
  for (const topic of [...new Set([...Object.keys(observed.metrics.sends), ...sends.keys()])].sort()) {
    const table = sends.get(topic) ?? { failed: 0, sentTransitions: 0, inboxRows: 0 };
    const count = (name: CountedMetric) => observed.metrics.sends[topic]?.counts[name] ?? 0;
    if (count('MessagesFailed') !== table.failed)
      exact.push(
        `${topic}: ${OutboxMetricName.MESSAGES_FAILED} ${count('MessagesFailed')} ≠ ${table.failed} moves to FAILED`,
      );
    const sent = count('MessagesSent');
    if (sent > table.sentTransitions)
      bounds.push(`${topic}: MessagesSent ${sent} > ${table.sentTransitions} SENT transitions`);
    if (sent < table.inboxRows) bounds.push(`${topic}: MessagesSent ${sent} < ${table.inboxRows} inbox rows`);
    if (count('RetriesScheduled') > count('SendFailures'))
      bounds.push(
        `${topic}: RetriesScheduled ${count('RetriesScheduled')} > SendFailures ${count('SendFailures')}`,
      );
    exactDetail.push(`${topic}: ${table.failed} moved to FAILED`);
    boundDetail.push(
      `${topic}: ${sent} sent ≤ ${table.sentTransitions} SENT transitions and ≥ ${table.inboxRows} inbox rows, ` +
        `${count('RetriesScheduled')} retries ≤ ${count('SendFailures')} send failures`,
    );
  }
  for (const subscriber of SUBSCRIBERS) {
    const tables = consumerFigures(snapshot, subscriber);
    const metrics = observed.metrics.consumers[subscriber] ?? {};
    const unreportedOf = observed.unreportedCommits[subscriber] ?? {};
    for (const topic of [...new Set([...Object.keys(metrics), ...tables.keys()])].sort()) {
      const table = tables.get(topic) ?? { deadLetters: 0, appliedRows: 0, rejectedRows: 0 };
      const count = (name: CountedMetric) => metrics[topic]?.counts[name] ?? 0;
      const unreported = unreportedOf[topic] ?? { applied: 0, rejected: 0 };
      const at = `${subscriber} ${topic}`;
      if (count('DeadLettered') !== table.deadLetters)
        exact.push(
          `${at}: ${OutboxMetricName.DEAD_LETTERED} ${count('DeadLettered')} ≠ ${table.deadLetters} dead letters with a reason`,
        );
      if (count('MessagesApplied') + unreported.applied !== table.appliedRows)
        exact.push(
          `${at}: ${OutboxMetricName.MESSAGES_APPLIED} ${count('MessagesApplied')} + ${unreported.applied} unreported ≠ ${table.appliedRows} applied inbox rows`,
        );
      if (count('BusinessRejections') + unreported.rejected !== table.rejectedRows)
        exact.push(
          `${at}: ${OutboxMetricName.BUSINESS_REJECTIONS} ${count('BusinessRejections')} + ${unreported.rejected} unreported ≠ ${table.rejectedRows} rejected inbox rows`,
        );
      exactDetail.push(
        `${at}: ${table.appliedRows + table.rejectedRows} inbox rows (${unreported.applied + unreported.rejected} unreported), ${table.deadLetters} dead-lettered`,
      );
    }
  }
  const byReceipt = confirmedByReceipt(snapshot);
  if (observed.receiptsApplied.CONFIRMED !== byReceipt)
    exact.push(
      `receipts function: CONFIRMED ${observed.receiptsApplied.CONFIRMED} ≠ ${byReceipt} deliveries confirmed by receipt`,
    );
  exactDetail.push(`receipts: ${byReceipt} deliveries confirmed by receipt`);
  return [
    verdict(
      'metrics agree with the tables per topic and subscriber (FAILED, dead letters, inbox rows, receipts that confirmed)',
      exact,
      exactDetail.join('; '),
    ),
    verdict(
      'metrics bound the sends per topic (SENT transitions, inbox rows at every subscriber)',
      bounds,
      boundDetail.join('; '),
    ),
  ];
}

/** The outbox's figures per topic, each delivery under the topic its sender names in its metrics. */
function sendFigures(snapshot: DrillSnapshot): Map<string, SendFigures> {
  const figures = new Map<string, SendFigures>();
  const of = (topic: string) => {
    let topicFigures = figures.get(topic);
    if (topicFigures === undefined) {
      topicFigures = { failed: 0, sentTransitions: 0, inboxRows: 0 };
      figures.set(topic, topicFigures);
    }
    return topicFigures;
  };
  for (const row of snapshot.outbox) {
    const topic = typeof row.topic === 'string' ? row.topic : UNKNOWN_TOPIC;
    const history = historyOf(row);
    const sent = history.filter((entry) => entry.event === HistoryEvent.SENT).length;
    if (sent > 0) of(topic).sentTransitions += sent;
    // Every move to FAILED, not the FAILED status: a copy from an earlier attempt can still be applied after the
    // retries ran out, and its receipt moves the delivery on to CONFIRMED.
    for (const failure of history.filter((entry) => entry.event === HistoryEvent.FAILED)) {
      // Only the sweeper's failUnreadable writes FAILED without a `from`: it could not read the item's topic.
      of(failure.from === undefined ? UNKNOWN_TOPIC : topic).failed += 1;
    }
  }
  for (const subscriber of SUBSCRIBERS) {
    for (const row of snapshot.subscribers[subscriber].inbox) {
      of(typeof row.topic === 'string' ? row.topic : UNKNOWN_TOPIC).inboxRows += 1;
    }
  }
  return figures;
}

/** `subscriber`'s tables' figures per topic, each row under the topic its consumer names in its metrics. */
function consumerFigures(
  snapshot: DrillSnapshot,
  subscriber: (typeof SUBSCRIBERS)[number],
): Map<string, ConsumerFigures> {
  const figures = new Map<string, ConsumerFigures>();
  const of = (topic: string) => {
    let topicFigures = figures.get(topic);
    if (topicFigures === undefined) {
      topicFigures = { deadLetters: 0, appliedRows: 0, rejectedRows: 0 };
      figures.set(topic, topicFigures);
    }
    return topicFigures;
  };
  const tables = snapshot.subscribers[subscriber];
  for (const row of tables.inbox) {
    const topic = typeof row.topic === 'string' ? row.topic : UNKNOWN_TOPIC;
    if (isAppliedOutcome(row.outcome)) of(topic).appliedRows += 1;
    else of(topic).rejectedRows += 1;
  }
  for (const letter of tables.deadLetters) {
    // SQS's redrive policy moves a message itself, with no reason: the consumer never counted it.
    if (readDeadLetter(letter).cause === DeadLetterCause.REDRIVE_POLICY) continue;
    of(deadLetterTopic(letter)).deadLetters += 1;
  }
  return figures;
}

/** Deliveries whose confirmation a receipt wrote (the history names `receipt:<subscriber>`). */
function confirmedByReceipt(snapshot: DrillSnapshot): number {
  return snapshot.outbox.filter(
    (row) =>
      row.status === MessageStatus.CONFIRMED &&
      String(historyOf(row).findLast((entry) => entry.event === HistoryEvent.CONFIRMED)?.by).startsWith(
        'receipt:',
      ),
  ).length;
}

/** The topic the consumer counted a dead letter under: the envelope's, else the relay's attribute. */
function deadLetterTopic(letter: DeadLetterCopy): string {
  try {
    return parseEnvelope(JSON.parse(letter.body)).topic;
  } catch {
    return letter.attributes[MESSAGE_ATTRIBUTES.topic] ?? UNKNOWN_TOPIC;
  }
}
