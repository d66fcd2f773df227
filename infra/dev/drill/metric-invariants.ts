import { RELEASED } from '../../../functions/inventory/apply-order/plan-stock-release.ts';
import { HistoryEvent, MessageStatus, parseEnvelope } from '../../../shared/index.ts';
import {
  APPLIED,
  DeadLetterCause,
  historyOf,
  MESSAGE_ATTRIBUTES,
  OutboxMetricName,
  readDeadLetter,
  UNKNOWN_TOPIC,
} from '../../../shared/memory/index.ts';
import type { DeadLetterCopy, DrillSnapshot, InvariantResult } from './invariants.ts';
import type { CountedMetric, ObservedMetrics } from './observed-metrics.ts';
import type { UnreportedCommitCounts } from './unreported-commits.ts';

/** What the drill observed besides the tables: the metrics, and the inbox rows no metric can count. */
export interface MetricObservations {
  readonly metrics: ObservedMetrics;
  /**
   * Inbox rows committed, and confirmations written, by a delivery that then threw (at its confirm, an injected
   * crash or a real error, or at the drain of its parked successors after it): a delivery that throws returns no
   * counts.
   */
  readonly unreportedCommits: UnreportedCommitCounts;
}

/**
 * The inbox outcomes the inventory consumer records when a message's effect committed (`APPLIED`, or `RELEASED` for
 * a cancel that gave its stock back); every other outcome records a business rejection.
 */
const APPLIED_OUTCOMES: ReadonlySet<unknown> = new Set([APPLIED, RELEASED]);

/** Whether an inbox row's outcome says its message's effect committed (MessagesApplied counts it). */
export function isAppliedOutcome(outcome: unknown): boolean {
  return APPLIED_OUTCOMES.has(outcome);
}

/** Who the consumer's confirmations name in a message's history (the consumer function's store actor). */
export const CONSUMER_ACTOR = 'consumer';

/** What the tables say, per topic, that the metrics can be held to. */
interface TableFigures {
  failed: number;
  confirmedByConsumer: number;
  consumerDeadLetters: number;
  appliedRows: number;
  rejectedRows: number;
  sentTransitions: number;
}

/**
 * Holds the metrics the functions would have published to the tables, per topic. Exact where each count is taken
 * right after the write it counts succeeded and the invocation returns it (nothing after the write can throw):
 * - MessagesFailed = transitions to FAILED in the messages' histories (a FAILED message whose earlier copy is then
 *   applied moves on to CONFIRMED; nothing replays in the drill; a message the sweeper could not read at all is
 *   counted under `(unknown)`, and is recognised by its FAILED transition, the only one written without a `from`);
 * - DeadLettered = copies in the dead-letter queue that carry the consumer's reason (SQS's own redrive adds none);
 * - ConfirmLatencyMs values + unreported confirmations = messages whose CONFIRMED transition the consumer wrote
 *   (the sweeper's are not timed);
 * - MessagesApplied + unreported applied commits = applied inbox rows (APPLIED, RELEASED), and BusinessRejections
 *   + unreported rejections = the other inbox rows: a delivery that commits and then fails (at its confirm, or at
 *   the drain of an ordered key's parked successors) returns no counts (at-least-once), and its redelivery counts a
 *   duplicate.
 * Bounds where a send's count and its mark can part:
 * - MessagesSent ≤ SENT transitions (a message is marked SENT just before its send: each accepted send follows its
 *   own mark, while a mark whose send SQS refused, or whose sender stopped before sending, counts no send), and
 *   MessagesSent ≥ inbox rows (every applied copy was an accepted send), and RetriesScheduled ≤ SendFailures (each
 *   follows one failed send).
 */
export function checkMetrics(snapshot: DrillSnapshot, observed: MetricObservations): InvariantResult[] {
  const tables = tableFigures(snapshot);
  const topics = [...new Set([...Object.keys(observed.metrics), ...tables.keys()])].sort();
  const exact: string[] = [];
  const bounds: string[] = [];
  const exactDetail: string[] = [];
  const boundDetail: string[] = [];
  for (const topic of topics) {
    const table = tables.get(topic) ?? emptyFigures();
    const observedTopic = observed.metrics[topic];
    const count = (name: CountedMetric) => observedTopic?.counts[name] ?? 0;
    const latencies = observedTopic?.confirmLatenciesMs.length ?? 0;
    const unreported = observed.unreportedCommits[topic] ?? { applied: 0, rejected: 0 };
    const unreportedConfirmations = unreported.confirmed ?? 0;
    const equal = (name: string, figures: readonly [metric: number, table: number], what: string) => {
      const [metric, rows] = figures;
      if (metric !== rows) exact.push(`${topic}: ${name} ${metric} ≠ ${rows} ${what}`);
    };
    equal(OutboxMetricName.MESSAGES_FAILED, [count('MessagesFailed'), table.failed], 'moves to FAILED');
    equal(
      OutboxMetricName.DEAD_LETTERED,
      [count('DeadLettered'), table.consumerDeadLetters],
      "consumer's dead letters",
    );
    equal(
      `${OutboxMetricName.CONFIRM_LATENCY_MS} values + ${unreportedConfirmations} unreported`,
      [latencies + unreportedConfirmations, table.confirmedByConsumer],
      'confirmations by the consumer',
    );
    equal(
      `${OutboxMetricName.MESSAGES_APPLIED} + ${unreported.applied} unreported`,
      [count('MessagesApplied') + unreported.applied, table.appliedRows],
      'APPLIED inbox rows',
    );
    equal(
      `${OutboxMetricName.BUSINESS_REJECTIONS} + ${unreported.rejected} unreported`,
      [count('BusinessRejections') + unreported.rejected, table.rejectedRows],
      'rejected inbox rows',
    );
    exactDetail.push(
      `${topic}: ${table.failed} moved to FAILED, ${table.consumerDeadLetters} dead-lettered, ` +
        `${table.confirmedByConsumer} confirmed by the consumer, ` +
        `${table.appliedRows + table.rejectedRows} inbox rows (${unreported.applied + unreported.rejected} unreported)`,
    );

    const rows = table.appliedRows + table.rejectedRows;
    const sent = count('MessagesSent');
    if (sent > table.sentTransitions)
      bounds.push(`${topic}: MessagesSent ${sent} > ${table.sentTransitions} SENT transitions`);
    if (sent < rows) bounds.push(`${topic}: MessagesSent ${sent} < ${rows} inbox rows`);
    if (count('RetriesScheduled') > count('SendFailures'))
      bounds.push(
        `${topic}: RetriesScheduled ${count('RetriesScheduled')} > SendFailures ${count('SendFailures')}`,
      );
    boundDetail.push(
      `${topic}: ${sent} sent ≤ ${table.sentTransitions} SENT transitions and ≥ ${rows} inbox rows, ` +
        `${count('RetriesScheduled')} retries ≤ ${count('SendFailures')} send failures`,
    );
  }
  return [
    verdict(
      'metrics agree with the tables per topic (FAILED, dead letters, consumer confirmations, inbox rows)',
      exact,
      exactDetail.join('; '),
    ),
    verdict(
      'metrics bound the sends per topic (SENT transitions, inbox rows)',
      bounds,
      boundDetail.join('; '),
    ),
  ];
}

function verdict(name: string, failures: readonly string[], okDetail: string): InvariantResult {
  return {
    name,
    ok: failures.length === 0,
    detail:
      failures.length === 0
        ? okDetail
        : `${failures.length} violation(s), e.g. ${failures.slice(0, 3).join('; ')}`,
  };
}

function emptyFigures(): TableFigures {
  return {
    failed: 0,
    confirmedByConsumer: 0,
    consumerDeadLetters: 0,
    appliedRows: 0,
    rejectedRows: 0,
    sentTransitions: 0,
  };
}

/** The tables' figures per topic, each message under the topic its function names in its metrics. */
function tableFigures(snapshot: DrillSnapshot): Map<string, TableFigures> {
  const figures = new Map<string, TableFigures>();
  const of = (topic: string) => {
    let topicFigures = figures.get(topic);
    if (topicFigures === undefined) {
      topicFigures = emptyFigures();
      figures.set(topic, topicFigures);
    }
    return topicFigures;
  };
  for (const message of snapshot.outbox) {
    const topic = typeof message.topic === 'string' ? message.topic : UNKNOWN_TOPIC;
    const history = historyOf(message);
    const sent = history.filter((entry) => entry.event === HistoryEvent.SENT).length;
    if (sent > 0) of(topic).sentTransitions += sent;
    // Every move to FAILED, not the FAILED status: a delivery from an earlier attempt can still be applied after
    // the retries ran out, and its confirmation moves the message on to CONFIRMED.
    for (const failure of history.filter((entry) => entry.event === HistoryEvent.FAILED)) {
      // Only the sweeper's failUnreadable writes FAILED without a `from`: it could not read the item's topic.
      of(failure.from === undefined ? UNKNOWN_TOPIC : topic).failed += 1;
    }
    if (message.status === MessageStatus.CONFIRMED) {
      const confirmation = history.findLast((entry) => entry.event === HistoryEvent.CONFIRMED);
      if (confirmation?.by === CONSUMER_ACTOR) of(topic).confirmedByConsumer += 1;
    }
  }
  for (const row of snapshot.inbox) {
    const topic = typeof row.topic === 'string' ? row.topic : UNKNOWN_TOPIC;
    if (isAppliedOutcome(row.outcome)) of(topic).appliedRows += 1;
    else of(topic).rejectedRows += 1;
  }
  for (const letter of snapshot.deadLetters) {
    // SQS's redrive policy moves a message itself, with no reason: the consumer never counted it.
    if (readDeadLetter(letter).cause === DeadLetterCause.REDRIVE_POLICY) continue;
    of(deadLetterTopic(letter)).consumerDeadLetters += 1;
  }
  return figures;
}

/** The topic the consumer counted a dead letter under: the envelope's, else the relay's attribute. */
function deadLetterTopic(letter: DeadLetterCopy): string {
  try {
    return parseEnvelope(JSON.parse(letter.body)).topic;
  } catch {
    return letter.attributes[MESSAGE_ATTRIBUTES.topic] ?? UNKNOWN_TOPIC;
  }
}
