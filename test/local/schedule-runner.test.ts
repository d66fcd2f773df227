import { describe, expect, it } from 'vitest';
import { localFunction } from '../../infra/local/local-function.ts';
import {
  createScheduleRunner,
  parseRateExpression,
  scheduledEvent,
  scheduleRateSeconds,
  UnsupportedScheduleError,
} from '../../infra/local/schedule-runner.ts';
import type { FunctionSpec } from '../../infra/topology.ts';

const spec: FunctionSpec = {
  entry: 'functions/outbox/sweeper/handler.ts',
  description: 'sweeper',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
  tables: {},
};

const withSchedule = (schedule: unknown): FunctionSpec => ({ ...spec, schedule }) as FunctionSpec;

describe('scheduleRateSeconds', () => {
  it('is undefined for a function without a schedule', () => {
    expect(scheduleRateSeconds(spec)).toBeUndefined();
  });

  it('reads seconds, minutes and rate expressions', () => {
    expect(scheduleRateSeconds(withSchedule({ rateSeconds: 30 }))).toBe(30);
    expect(scheduleRateSeconds(withSchedule({ rateMinutes: 2 }))).toBe(120);
    expect(scheduleRateSeconds(withSchedule('rate(1 minute)'))).toBe(60);
    expect(scheduleRateSeconds(withSchedule({ expression: 'rate(5 minutes)' }))).toBe(300);
  });

  it('fails loudly on a schedule it cannot run', () => {
    expect(() => scheduleRateSeconds(withSchedule('cron(0 * * * ? *)'))).toThrow(UnsupportedScheduleError);
    expect(() => scheduleRateSeconds(withSchedule({ rateSeconds: 0 }))).toThrow(/sweeper\/handler\.ts/);
  });
});

describe('parseRateExpression', () => {
  it('understands the EventBridge units', () => {
    expect(parseRateExpression('rate(2 hours)')).toBe(7_200);
    expect(parseRateExpression('rate(1 day)')).toBe(86_400);
    expect(parseRateExpression('rate(1 fortnight)')).toBeUndefined();
  });
});

describe('scheduledEvent', () => {
  it('looks like the event an EventBridge rule sends', () => {
    expect(scheduledEvent('sweep', new Date('2024-05-01T12:00:00.456Z'))).toMatchObject({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: '2024-05-01T12:00:00Z',
      region: 'us-east-1',
      resources: ['arn:aws:events:us-east-1:123456789012:rule/sweep'],
      detail: {},
    });
  });
});

describe('createScheduleRunner', () => {
  it('invokes the function once per period, not at start, and at once on pollOnce', async () => {
    let now = 0;
    const events: unknown[] = [];
    const fn = localFunction('getStock', spec, {}, async (event) => {
      events.push(event);
    });
    const runner = createScheduleRunner({ fn, rateSeconds: 60, now: () => now });
    await runner.pause();
    runner.start();
    await runner.pollOnce();
    expect(events).toHaveLength(1);
    expect(runner.description).toBe('getStock ← schedule: every 60s');
    now = 30_000;
    runner.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toHaveLength(1);
    await runner.stop();
    expect(runner.stats().invocations).toBe(1);
  });
});
