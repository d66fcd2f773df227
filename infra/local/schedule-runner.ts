/**
 * Stands in for an EventBridge schedule: invokes a function every `rate` with a Scheduled Event, since moto
 * neither fires rules nor runs functions (DESIGN §5: "run schedules on timers").
 */
import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import type { FunctionSpec } from '../topology.ts';
import { EMULATOR_REGION } from './emulator-config.ts';
import type { LocalFunction } from './local-function.ts';
import { createPollLoop, type Poller, type PollerStats } from './poll-loop.ts';

/** A function's schedule is written in a form the local runtime does not understand. */
export class UnsupportedScheduleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Options of {@link createScheduleRunner}. */
export interface ScheduleRunnerOptions {
  readonly fn: LocalFunction;
  readonly rateSeconds: number;
  readonly log?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  minute: 60,
  minutes: 60,
  hour: 3_600,
  hours: 3_600,
  day: 86_400,
  days: 86_400,
};

/**
 * A function's schedule in seconds, from an optional `schedule` on its topology entry: `{ rateSeconds }`,
 * `{ rateMinutes }` or an EventBridge `rate(5 minutes)` expression (alone or as `{ expression }`).
 * `undefined` when the function has no schedule; {@link UnsupportedScheduleError} for anything else.
 */
export function scheduleRateSeconds(spec: FunctionSpec): number | undefined {
  const schedule: unknown = (spec as FunctionSpec & { readonly schedule?: unknown }).schedule;
  if (schedule === undefined) return undefined;
  const rate = readRate(schedule);
  if (rate === undefined || !Number.isFinite(rate) || rate <= 0) {
    throw new UnsupportedScheduleError(
      `schedule ${JSON.stringify(schedule)} of ${spec.entry} is not a positive rate the local runtime can run`,
    );
  }
  return rate;
}

function readRate(schedule: unknown): number | undefined {
  if (typeof schedule === 'string') return parseRateExpression(schedule);
  if (typeof schedule !== 'object' || schedule === null) return undefined;
  const { rateSeconds, rateMinutes, expression } = schedule as Record<string, unknown>;
  if (typeof rateSeconds === 'number') return rateSeconds;
  if (typeof rateMinutes === 'number') return rateMinutes * 60;
  if (typeof expression === 'string') return parseRateExpression(expression);
  return undefined;
}

/** Seconds of an EventBridge `rate(N unit)` expression; `cron(...)` is not run locally. */
export function parseRateExpression(expression: string): number | undefined {
  const match = /^rate\((\d+)\s+([a-z]+)\)$/.exec(expression.trim());
  const unit = match?.[2] === undefined ? undefined : UNIT_SECONDS[match[2]];
  return match?.[1] === undefined || unit === undefined ? undefined : Number(match[1]) * unit;
}

/** The event an EventBridge rule hands its target. */
export function scheduledEvent(ruleName: string, now: Date): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    // EventBridge stamps whole seconds.
    time: `${now.toISOString().slice(0, 19)}Z`,
    region: EMULATOR_REGION,
    resources: [`arn:aws:events:${EMULATOR_REGION}:123456789012:rule/${ruleName}`],
    detail: {},
  };
}

/**
 * Invokes `fn` once every `rateSeconds`, the first time one period after start (as a rate rule does);
 * `pollOnce()` invokes it at once.
 * @example
 * const sweeper = createScheduleRunner({ fn, rateSeconds: 60 });
 * sweeper.start();
 */
export function createScheduleRunner(options: ScheduleRunnerOptions): Poller {
  const { fn, rateSeconds } = options;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const stats: PollerStats = { invocations: 0, failedInvocations: 0, records: 0, discardedBatches: 0 };
  let nextRunAt = now() + rateSeconds * 1000;

  const control = createPollLoop({
    name: fn.key,
    // Check every second (or every period, if shorter) whether the next run is due.
    intervalMs: Math.min(1_000, rateSeconds * 1000),
    log,
    cycle: async ({ flush }) => {
      if (!flush && now() < nextRunAt) return { progressed: 0, idle: true };
      nextRunAt = now() + rateSeconds * 1000;
      const invocation = await fn.invoke(scheduledEvent(`${fn.name}-schedule`, new Date(now())));
      stats.invocations += 1;
      if (!invocation.ok) {
        stats.failedInvocations += 1;
        log(`[${fn.key}] scheduled run failed: ${invocation.error.name}: ${invocation.error.message}`);
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
    functionKey: fn.key,
    description: `${fn.key} ← schedule: every ${rateSeconds}s`,
    stats: () => ({ ...stats }),
  };
}
