import type { Duration } from 'aws-cdk-lib';
import { ALARM_DEFAULTS } from './defaults.ts';
import type { ReportProblem } from './function-settings.ts';

/** When the outbox's alarms go off; each alarms when its metric is above its threshold. */
export interface OutboxAlarmThresholds {
  /**
   * Messages visible in a topic queue's dead-letter queue.
   * @default 0
   */
  readonly deadLetterMessages?: number;
  /**
   * Messages visible in the relay's failure queue (stream batches the relay gave up on).
   * @default 0
   */
  readonly failureQueueMessages?: number;
  /**
   * FAILED messages of a topic, and FAILED deliveries to a subscriber over all its topics (the sweeper's
   * `FailedMessages` gauge).
   * @default 0
   */
  readonly failedMessages?: number;
  /**
   * Gaps the sweeper found in an ordered topic per period (its `OrderingGaps`: messages a consumer held past the
   * topic's gap timeout, waiting for a predecessor).
   * @default 0
   */
  readonly orderingGaps?: number;
  /**
   * Age of a topic's oldest PENDING message (the sweeper's `OldestPendingAgeSeconds`).
   * @default Duration.minutes(15)
   */
  readonly oldestPendingAge?: Duration;
  /**
   * How far the relay is behind the outbox stream (the mapping's `IteratorAge`).
   * @default Duration.minutes(5)
   */
  readonly relayIteratorAge?: Duration;
  /**
   * How long a delivery to a subscriber may wait for its receipt: the age, since it was written, of the
   * subscriber's oldest SENT and unconfirmed delivery (the sweeper's `OldestUnconfirmedAgeSeconds` of the
   * subscriber). It grows while the subscriber's consumer is down or behind, or its receipts are lost.
   * @default Duration.minutes(15)
   */
  readonly unconfirmedAge?: Duration;
  /**
   * Age of the oldest message in a subscriber's queue (`OutboxSubscription`: the queue's
   * `ApproximateAgeOfOldestMessage`).
   * @default Duration.minutes(30)
   */
  readonly queueMessageAge?: Duration;
  /**
   * Failed invocations of a function the outbox built, per period.
   * @default 0
   */
  readonly errors?: number;
  /**
   * Throttled invocations of a function the outbox built, per period.
   * @default 0
   */
  readonly throttles?: number;
  /**
   * The period of every alarm; one breaching period raises it.
   * @default Duration.minutes(5)
   */
  readonly period?: Duration;
}

/**
 * The thresholds, each checked: a bad one is reported (failing the synth with the prop's name) and replaced by
 * its default, so that CloudWatch's own checks do not throw first with a message naming no prop.
 */
export function checkedThresholds(
  given: OutboxAlarmThresholds,
  report: ReportProblem,
): Required<OutboxAlarmThresholds> {
  const thresholds: Required<OutboxAlarmThresholds> = { ...ALARM_DEFAULTS, ...definedOnly(given) };
  const problem = (message: string) => report(`TransactionalOutbox: alarmThresholds.${message}`);
  for (const name of [
    'deadLetterMessages',
    'failureQueueMessages',
    'failedMessages',
    'orderingGaps',
    'errors',
    'throttles',
  ] as const) {
    const value = thresholds[name];
    if (!Number.isFinite(value) || value < 0) problem(`${name} must be 0 or more, got ${value}`);
  }
  for (const name of [
    'oldestPendingAge',
    'relayIteratorAge',
    'unconfirmedAge',
    'queueMessageAge',
    'period',
  ] as const) {
    if (thresholds[name].isUnresolved()) {
      problem(`${name} must be known at synth`);
      return { ...thresholds, [name]: ALARM_DEFAULTS[name] };
    }
  }
  const periodMs = thresholds.period.toMilliseconds({ integral: false });
  // Standard-resolution alarms take whole minutes.
  if (periodMs < 60_000 || periodMs % 60_000 !== 0) {
    problem(`period must be a whole number of minutes, got ${periodMs / 1000} s`);
    return { ...thresholds, period: ALARM_DEFAULTS.period };
  }
  return thresholds;
}

/** `record` without its `undefined` entries, so they do not hide the defaults they are merged over. */
function definedOnly<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
