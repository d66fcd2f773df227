/**
 * Stands in for an EventBridge rate rule: invokes its target function every period with a Scheduled Event
 * (or the target's constant input), since moto neither fires rules nor runs functions.
 */
import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import type { LocalFunction } from '../host/local-function.ts';
import type { ScheduleDefinition } from '../template/read-schedules.ts';
import { createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';

/** Options of {@link createScheduleRunner}. */
export interface ScheduleRunnerOptions {
  readonly fn: LocalFunction;
  readonly schedule: ScheduleDefinition;
  /** Where the rule lives, for the event it sends. @default us-east-1 and the emulators' account */
  readonly region?: string;
  readonly accountId?: string;
  readonly log?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

const DEFAULTS = { region: 'us-east-1', accountId: '123456789012' } as const;

/** The event an EventBridge rule hands its target. */
export function scheduledEvent(rule: {
  readonly name: string;
  readonly region: string;
  readonly accountId: string;
  readonly now: Date;
}): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: rule.accountId,
    // EventBridge stamps whole seconds.
    time: `${rule.now.toISOString().slice(0, 19)}Z`,
    region: rule.region,
    resources: [`arn:aws:events:${rule.region}:${rule.accountId}:rule/${rule.name}`],
    detail: {},
  };
}

/**
 * Invokes `fn` once every period of the schedule, the first time one period after start (as a rate rule
 * does); `pollOnce()` invokes it at once.
 * @example
 * const sweeper = createScheduleRunner({ fn, schedule: app.schedules[0] });
 * sweeper.start();
 */
export function createScheduleRunner(options: ScheduleRunnerOptions): Poller {
  const { fn, schedule } = options;
  const { rateSeconds } = schedule;
  const region = options.region ?? DEFAULTS.region;
  const accountId = options.accountId ?? DEFAULTS.accountId;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };
  let nextRunAt = now() + rateSeconds * 1000;

  const control = createPollLoop({
    name: fn.name,
    // Check every second (or every period, if shorter) whether the next run is due.
    intervalMs: Math.min(1_000, rateSeconds * 1000),
    log,
    cycle: async ({ flush }) => {
      if (!flush && now() < nextRunAt) return { progressed: 0, idle: true };
      nextRunAt = now() + rateSeconds * 1000;
      const event =
        schedule.input ??
        scheduledEvent({ name: schedule.name.replaceAll('/', '-'), region, accountId, now: new Date(now()) });
      const invocation = await fn.invoke(event);
      stats.invocations += 1;
      if (!invocation.ok) {
        stats.failedInvocations += 1;
        log(`[${fn.name}] scheduled run failed: ${invocation.error.name}: ${invocation.error.message}`);
      }
      // A scheduled run is never "more work waiting": the loop goes back to waiting for the next period.
      return { progressed: 0, idle: true };
    },
  });
  return {
    ...control,
    get paused() {
      return control.paused;
    },
    functionName: fn.name,
    description: `${fn.name} ← schedule ${schedule.name}: ${schedule.expression}${
      schedule.input === undefined ? '' : ` with input ${JSON.stringify(schedule.input)}`
    }`,
    stats: () => ({ ...stats }),
  };
}
