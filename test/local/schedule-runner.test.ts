import { describe, expect, it } from 'vitest';
import { createScheduleRunner, scheduledEvent } from '../../infra/dev/local/events/schedule-runner.ts';
import { localFunction } from '../../infra/dev/local/host/local-function.ts';
import type { FunctionDefinition } from '../../infra/dev/local/template/read-functions.ts';
import type { ScheduleDefinition } from '../../infra/dev/local/template/read-schedules.ts';

const sweeper: FunctionDefinition = {
  name: 'Outbox/Sweeper',
  logicalId: 'OutboxSweeper1234',
  entry: 'unused.ts',
  handlerExport: 'handler',
  timeoutSeconds: 5,
  memoryMb: 128,
  environment: {},
};

const everyMinute: ScheduleDefinition = {
  name: 'Outbox/SweepSchedule',
  functionName: sweeper.name,
  expression: 'rate(1 minute)',
  rateSeconds: 60,
  input: undefined,
};

describe('scheduledEvent', () => {
  it('looks like the event an EventBridge rule sends', () => {
    expect(
      scheduledEvent({
        name: 'sweep',
        region: 'eu-west-1',
        accountId: '000000000000',
        now: new Date('2024-05-01T12:00:00.456Z'),
      }),
    ).toMatchObject({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: '2024-05-01T12:00:00Z',
      region: 'eu-west-1',
      resources: ['arn:aws:events:eu-west-1:000000000000:rule/sweep'],
      detail: {},
    });
  });
});

describe('createScheduleRunner', () => {
  it('invokes the function once per period, not at start, and at once on pollOnce', async () => {
    let now = 0;
    const events: unknown[] = [];
    const fn = localFunction({
      definition: sweeper,
      env: {},
      handler: async (event) => {
        events.push(event);
      },
    });
    const runner = createScheduleRunner({ fn, schedule: everyMinute, now: () => now });
    await runner.pause();
    runner.start();
    await runner.pollOnce();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ 'detail-type': 'Scheduled Event' });
    expect(runner.description).toBe('Outbox/Sweeper ← schedule Outbox/SweepSchedule: rate(1 minute)');
    now = 30_000;
    runner.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toHaveLength(1);
    now = 61_000;
    // The runner looks at the clock about once a second; a loaded machine may take longer.
    await expect.poll(() => events.length, { timeout: 5_000, interval: 100 }).toBe(2);
    await runner.stop();
    expect(runner.stats().invocations).toBe(2);
  });

  it('hands the target its constant input instead of the Scheduled Event when the rule sets one', async () => {
    const events: unknown[] = [];
    const fn = localFunction({
      definition: sweeper,
      env: {},
      handler: async (event) => {
        events.push(event);
      },
    });
    const runner = createScheduleRunner({ fn, schedule: { ...everyMinute, input: { tick: true } } });
    await runner.pollOnce();
    expect(events).toEqual([{ tick: true }]);
  });
});
