import { Duration, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { OutboxSettings, readSetting } from 'serverless-outbox';
import type { OutboxConsumerProps, TransactionalOutboxProps } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import { redeliveryHorizonMs } from '../../../shared/outbox/redelivery-horizon.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import type { Setting } from '../../../shared/settings/setting.ts';
import { SYNTH_TIMEOUT_MS, templateOf } from '../template-queries.ts';
import { CONSUMER_ENTRY, type OutboxService, outboxService, serviceFunction } from './outbox-service.ts';

const DAY_MS = 86_400_000;

/** What `app.synth()` says about the service, or `undefined` when it synthesizes. */
function synthError(service: OutboxService): string | undefined {
  try {
    service.app.synth();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A service built from `props` whose outbox has one consumer on `orderEvents` with `consumer` props. */
function withConsumer(
  consumer: Partial<OutboxConsumerProps> = {},
  props: Partial<TransactionalOutboxProps> = {},
): OutboxService {
  const service = outboxService(props);
  service.outbox.addConsumer('InventoryConsumer', {
    queue: 'orderEvents',
    entry: CONSUMER_ENTRY,
    ...consumer,
  });
  return service;
}

/** What the function's own reader says about the variable's text `raw` at start. */
function readerError(setting: Setting<unknown>, raw: string): string {
  try {
    readSetting({ [setting.name]: raw }, setting);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error(`${setting.name}=${raw} is accepted by its reader`);
}

beforeAll(() => {
  templateOf(outboxService().stack);
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox validation at synth', () => {
  it('synthesizes a valid service with a consumer and a writer', () => {
    const service = withConsumer();
    service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
    expect(synthError(service)).toBeUndefined();
  });

  it('reports a problem at synth, not while the stack is being built, with the outbox’s path', () => {
    let service: OutboxService | undefined;
    expect(() => {
      service = outboxService({ dueShards: 0 });
    }).not.toThrow();
    if (service === undefined) throw new Error('not built');
    expect(synthError(service)).toMatch(/Validation failed[\s\S]*\[Service\/Outbox\]/);
  });

  it('refuses a sweeper rate the sweeper would refuse, naming the prop', () => {
    expect(synthError(outboxService({ sweeperMaxMessagesPerSecond: 0 }))).toMatch(
      /sweeperMaxMessagesPerSecond: SWEEPER_MAX_MESSAGES_PER_SECOND/,
    );
  });

  describe('queues and topics', () => {
    it('refuses a topic routed to two queues', () => {
      const error = synthError(
        outboxService({ queues: { a: { topics: ['order.created'] }, b: { topics: ['order.created'] } } }),
      );
      expect(error).toMatch(/topic 'order\.created' is routed to more than one queue/);
    });

    it('refuses a topic name the relay would refuse, naming the queue and the topic', () => {
      const error = synthError(outboxService({ queues: { orders: { topics: ['Order_Created'] } } }));
      expect(error).toMatch(/queue 'orders': topic 'Order_Created' must be dotted lowercase/);
    });

    // A dead letter keeps its original enqueue time: with a shorter deadLetterRetention a poison message could
    // expire the moment it is dead-lettered, and nobody would see it.
    it('refuses a dead-letter retention that is not longer than the queue’s retention', () => {
      const error = synthError(
        outboxService({
          queues: {
            orderEvents: {
              topics: ['order.created'],
              retentionPeriod: Duration.days(14),
              deadLetterRetention: Duration.days(1),
            },
          },
        }),
      );
      expect(error).toMatch(/deadLetterRetention/);
    });

    it('refuses an outbox without any routed topic', () => {
      expect(synthError(outboxService({ queues: {} }))).toMatch(/no topic is routed to a queue/);
    });
  });

  describe('retryPolicies', () => {
    it('refuses a policy for a topic no queue carries', () => {
      const error = synthError(outboxService({ retryPolicies: { 'order.shipped': DEFAULT_RETRY_POLICY } }));
      expect(error).toMatch(
        /retryPolicies names topic 'order\.shipped', which no queue or subscriber carries/,
      );
    });

    it.each([
      ['no attempt', { ...DEFAULT_RETRY_POLICY, maxAttempts: 0 }],
      ['a first delay above the cap', { ...DEFAULT_RETRY_POLICY, baseDelayMs: 60_000, maxDelayMs: 1_000 }],
      ['a fractional delay', { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1.5 }],
    ])('refuses a policy with %s, naming the prop and RETRY_POLICIES', (_case, policy) => {
      const error = synthError(outboxService({ retryPolicies: { 'order.created': policy } }));
      expect(error).toMatch(/retryPolicies: RETRY_POLICIES is invalid/);
      expect(error).toContain(
        readerError(OutboxSettings.retryPolicies, JSON.stringify({ 'order.created': policy })),
      );
    });
  });

  describe('confirmDeadline', () => {
    it.each([1, 999, 12 * 3_600_000 + 1])('refuses %i ms with the reader’s own message', (ms) => {
      const error = synthError(outboxService({ confirmDeadline: Duration.millis(ms) }));
      expect(error).toContain(
        `confirmDeadline: ${readerError(OutboxSettings.confirmDeadlineMs, String(ms))}`,
      );
    });

    it('refuses a fractional number of milliseconds', () => {
      const error = synthError(outboxService({ confirmDeadline: Duration.millis(1500.5) }));
      expect(error).toMatch(/confirmDeadline: CONFIRM_DEADLINE_MS must be an integer from 1000 to 43200000/);
    });

    it('accepts the bounds the sweeper accepts', () => {
      for (const ms of [1_000, 12 * 3_600_000]) {
        expect(
          synthError(outboxService({ confirmDeadline: Duration.millis(ms) })),
          String(ms),
        ).toBeUndefined();
      }
    });

    it('refuses a deadline that is only known at deploy time', () => {
      const error = synthError(
        outboxService({ confirmDeadline: Duration.millis(Token.asNumber({ Ref: 'Deadline' })) }),
      );
      expect(error).toMatch(/CONFIRM_DEADLINE_MS must be known at synth/);
    });
  });

  describe('dueShards', () => {
    it.each([0, 65])('refuses %i shards with the reader’s own message', (shards) => {
      const error = synthError(outboxService({ dueShards: shards }));
      expect(error).toContain(`dueShards: ${readerError(OutboxSettings.dueShards, String(shards))}`);
    });

    it('refuses a fractional shard count', () => {
      expect(synthError(outboxService({ dueShards: 1.5 }))).toMatch(
        /dueShards: DUE_SHARDS must be an integer from 1 to 64/,
      );
    });

    it('accepts 1 and 64 shards', () => {
      for (const shards of [1, 64]) expect(synthError(outboxService({ dueShards: shards }))).toBeUndefined();
    });
  });

  describe('retention', () => {
    it.each([
      ['under a day', Duration.hours(12)],
      ['a fraction of days', Duration.hours(36)],
    ])('refuses a retention %s, naming the prop and RETENTION_DAYS', (_case, retention) => {
      expect(synthError(outboxService({ retention }))).toMatch(
        /retention: RETENTION_DAYS must be an integer from 1 to 3650/,
      );
    });

    it('accepts a day', () => {
      expect(synthError(outboxService({ retention: Duration.days(1) }))).toBeUndefined();
    });
  });

  describe('streamGracePeriod', () => {
    it('refuses a grace period the writer would refuse, once a writer is bound', () => {
      const service = outboxService({ streamGracePeriod: Duration.hours(13) });
      service.outbox.bindWriter(serviceFunction(service.stack, 'Writer'));
      expect(synthError(service)).toContain(
        `streamGracePeriod: ${readerError(OutboxSettings.streamGraceMs, String(13 * 3_600_000))}`,
      );
    });
  });

  describe('inbox retention', () => {
    /**
     * The longest a copy of order.created can still arrive, with the default policy, deadline and queues: 4 days in
     * the queue, then (dead-lettered by the consumer, a fresh send) 14 in the dead-letter queue, then (redriven, a
     * fresh send again) 4 in the queue.
     */
    const horizonDays =
      redeliveryHorizonMs({
        policy: DEFAULT_RETRY_POLICY,
        confirmDeadlineMs: DEFAULT_CONFIRM_DEADLINE_MS,
        queueRetentionMs: 4 * DAY_MS,
        deadLetterRetentionMs: 14 * DAY_MS,
      }) / DAY_MS;

    it('adds the queue’s retention, the dead-letter queue’s and the queue’s again for a redrive: about 24 days with the defaults', () => {
      expect(horizonDays).toBeGreaterThan(4 + 14 + 4 + 1.5);
      expect(horizonDays).toBeLessThan(30);
      // 18 days would have passed when only the longer of the two retentions counted, 22 without the redrive.
      expect(synthError(withConsumer({ inboxRetention: Duration.days(18) }))).toMatch(/redelivery horizon/);
      expect(synthError(withConsumer({ inboxRetention: Duration.days(22) }))).toMatch(/redelivery horizon/);
    });

    it('refuses an inbox that forgets a message before its last copy can arrive', () => {
      const error = synthError(withConsumer({ inboxRetention: Duration.days(Math.floor(horizonDays)) }));
      expect(error).toMatch(
        /consumer InventoryConsumer: inboxRetention \(INBOX_RETENTION_DAYS = \d+ days\) must be longer than the redelivery horizon of topic 'order\.created'/,
      );
    });

    it('accepts an inbox that outlasts the redelivery horizon', () => {
      expect(
        synthError(withConsumer({ inboxRetention: Duration.days(Math.ceil(horizonDays)) })),
      ).toBeUndefined();
    });

    it('counts the topic’s own retry policy and the queues’ retention into the horizon', () => {
      // Rounds enough to add over two weeks of deadlines: the default 30 days no longer suffice.
      const longPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 40 };
      expect(synthError(withConsumer({}, { retryPolicies: { 'order.created': longPolicy } }))).toMatch(
        /inboxRetention \(INBOX_RETENTION_DAYS = 30 days\)/,
      );
      const longDeadLetters = {
        orderEvents: { topics: ['order.created'], deadLetterRetention: Duration.days(14) },
      };
      const shortDeadLetters = {
        orderEvents: { topics: ['order.created'], deadLetterRetention: Duration.days(5) },
      };
      const inboxRetention = Duration.days(Math.ceil(horizonDays) - 2);
      expect(synthError(withConsumer({ inboxRetention }, { queues: longDeadLetters }))).toMatch(
        /redelivery horizon/,
      );
      expect(synthError(withConsumer({ inboxRetention }, { queues: shortDeadLetters }))).toBeUndefined();
    });

    it('names INBOX_RETENTION_DAYS when the inbox retention is too short', () => {
      const error = synthError(withConsumer({ inboxRetention: Duration.days(Math.floor(horizonDays)) }));
      expect(error).toMatch(/inboxRetention[\s\S]*INBOX_RETENTION_DAYS/);
    });

    it.each([
      ['under a day', Duration.hours(12)],
      ['a fraction of days', Duration.hours(36 * 24 + 12)],
    ])(
      'refuses an inbox retention %s, naming the consumer’s prop and INBOX_RETENTION_DAYS',
      (_case, inboxRetention) => {
        expect(synthError(withConsumer({ inboxRetention }))).toMatch(
          /InventoryConsumer\.inboxRetention: INBOX_RETENTION_DAYS must be an integer/,
        );
      },
    );
  });

  describe('consumers', () => {
    it('refuses a queue whose visibility timeout is shorter than its consumer’s timeout', () => {
      const error = synthError(
        withConsumer(
          { functionProps: { timeout: Duration.seconds(90) } },
          { queues: { orderEvents: { topics: ['order.created'], visibilityTimeout: Duration.seconds(60) } } },
        ),
      );
      expect(error).toMatch(
        /queue 'orderEvents': its visibility timeout \(60 s\) must be at least consumer InventoryConsumer's timeout \(90 s\)/,
      );
    });

    it('accepts a visibility timeout equal to the consumer’s timeout', () => {
      const error = synthError(
        withConsumer(
          { functionProps: { timeout: Duration.seconds(60) } },
          { queues: { orderEvents: { topics: ['order.created'], visibilityTimeout: Duration.seconds(60) } } },
        ),
      );
      expect(error).toBeUndefined();
    });

    it('refuses two consumers on one queue', () => {
      const service = withConsumer();
      service.outbox.addConsumer('AuditConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
      expect(synthError(service)).toMatch(/queue 'orderEvents' has more than one consumer \(AuditConsumer\)/);
    });

    it('refuses a redrive count the consumer would refuse, naming the queue’s prop and MAX_RECEIVE_COUNT', () => {
      const error = synthError(
        withConsumer({}, { queues: { orderEvents: { topics: ['order.created'], maxReceiveCount: 1001 } } }),
      );
      expect(error).toContain(
        `queues.orderEvents.maxReceiveCount: ${readerError(OutboxSettings.maxReceiveCount, '1001')}`,
      );
    });

    it('refuses both an existingInboxTable and inboxTableProps', () => {
      const service = outboxService();
      service.outbox.addConsumer('InventoryConsumer', {
        queue: 'orderEvents',
        entry: CONSUMER_ENTRY,
        existingInboxTable: dynamodb.Table.fromTableName(service.stack, 'Inbox', 'inventory-inbox'),
        inboxTableProps: { tableName: 'other-inbox' },
      });
      expect(synthError(service)).toMatch(
        /consumer InventoryConsumer: give either existingInboxTable or inboxTableProps, not both/,
      );
    });

    it('refuses inboxTableProps that change the inbox key', () => {
      const error = synthError(
        withConsumer({
          inboxTableProps: { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } },
        }),
      );
      expect(error).toMatch(/inboxTableProps may not change the key of the inbox table/);
    });
  });

  describe('sweeper', () => {
    it('refuses a sweeper timeout under 10 s, which leaves a run no time to work', () => {
      const error = synthError(outboxService({ sweeperFunctionProps: { timeout: Duration.seconds(9) } }));
      expect(error).toMatch(/the sweeper's timeout must be at least 10 s .*got 9 s/);
    });

    it('accepts a 10 s sweeper timeout', () => {
      expect(
        synthError(outboxService({ sweeperFunctionProps: { timeout: Duration.seconds(10) } })),
      ).toBeUndefined();
    });
  });

  describe('outbox table', () => {
    it.each([
      ['partitionKey', { partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING } }],
      ['sortKey', { sortKey: { name: 'createdAt', type: dynamodb.AttributeType.STRING } }],
      ['stream', { stream: dynamodb.StreamViewType.KEYS_ONLY }],
    ])('refuses outboxTableProps that set the %s', (_prop, outboxTableProps) => {
      expect(synthError(outboxService({ outboxTableProps }))).toMatch(
        /outboxTableProps may not change the key or the stream of the outbox table/,
      );
    });

    it('refuses both an existingOutboxTable and outboxTableProps', () => {
      const error = synthError(
        outboxService({ outboxTableProps: { tableName: 'orders-outbox' } }, (stack) => ({
          existingOutboxTable: dynamodb.Table.fromTableAttributes(stack, 'Existing', {
            tableName: 'orders-outbox',
            tableStreamArn:
              'arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox/stream/2026-01-01T00:00:00.000',
          }),
        })),
      );
      expect(error).toMatch(/give either existingOutboxTable or outboxTableProps, not both/);
    });
  });
});
