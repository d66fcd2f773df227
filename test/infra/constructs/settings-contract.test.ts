import { Duration } from 'aws-cdk-lib';
import { OutboxSettings, readSetting } from 'serverless-outbox';
import { createRelayHandler, createSweeperHandler, isEnvHandler } from 'serverless-outbox/lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import {
  CONSUMER_SETTINGS,
  RELAY_SETTINGS,
  SWEEPER_SETTINGS,
  WRITER_SETTINGS,
} from '../../../shared/settings/outbox-settings.ts';
import { readOptionalSetting, type Setting } from '../../../shared/settings/setting.ts';
import {
  type CfnTemplate,
  deployedEnvironment,
  environmentOf,
  functionId,
  idsOfType,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { handler as consumerHandler } from './fixtures/consumer-handler.ts';
import { handler as writerHandler } from './fixtures/writer-handler.ts';
import { CONSUMER_ENTRY, outboxService, serviceFunction } from './outbox-service.ts';

const ORDER_POLICY = { baseDelayMs: 500, multiplier: 3, maxDelayMs: 60_000, maxAttempts: 4 };

let json: CfnTemplate;
/** The logical ids of the service's tables and queues, by what they are. */
let ids: Record<string, string>;

beforeAll(() => {
  const { stack, outbox } = outboxService({
    queues: {
      orders: { topics: ['order.created', 'order.cancelled'], maxReceiveCount: 3 },
      payments: { topics: ['payment.captured'] },
    },
    retryPolicies: { 'order.created': ORDER_POLICY },
    confirmDeadline: Duration.minutes(2),
    dueShards: 16,
    streamGracePeriod: Duration.seconds(30),
    retention: Duration.days(7),
    ordering: {
      'order.created': { scope: 'order', gapTimeout: Duration.minutes(2) },
      'order.cancelled': { scope: 'order' },
      'payment.captured': 'none',
    },
  });
  const orders = outbox.addConsumer('OrderConsumer', {
    queue: 'orders',
    entry: CONSUMER_ENTRY,
    inboxRetention: Duration.days(60),
  });
  const payments = outbox.addConsumer('PaymentConsumer', {
    queue: 'payments',
    entry: CONSUMER_ENTRY,
    confirm: false,
  });
  outbox.bindWriter(serviceFunction(stack, 'Writer'));
  outbox.bindReader(serviceFunction(stack, 'Reader'));
  json = templateOf(stack);
  const target = (token: string) => {
    const resolved: unknown = stack.resolve(token);
    return (resolved as { Ref: string }).Ref;
  };
  ids = {
    outbox: target(outbox.table.tableName),
    ordersInbox: target(orders.inboxTable.tableName),
    paymentsInbox: target(payments.inboxTable.tableName),
    ordersQueue: target(orders.queue.queue.queueUrl),
    ordersDeadLetters: target(orders.queue.deadLetterQueue.queueUrl),
    paymentsQueue: target(payments.queue.queue.queueUrl),
    sequences: target(outbox.sequenceTable?.tableName ?? 'no sequence table'),
  };
}, SYNTH_TIMEOUT_MS);

/** The settings each function reads through the settings contract. */
/** RECEIPT_QUEUE_URL and SUBSCRIBER are read only by a consumer that confirms by receipt. */
const OUTBOX_CONFIRMING_CONSUMER_SETTINGS = CONSUMER_SETTINGS.filter(
  (setting) => setting !== OutboxSettings.receiptQueueUrl && setting !== OutboxSettings.subscriber,
);
const SETTINGS_READ: Readonly<Record<string, readonly Setting<unknown>[]>> = {
  'Outbox/Relay': RELAY_SETTINGS,
  'Outbox/Sweeper': SWEEPER_SETTINGS,
  'Outbox/OrderConsumer': OUTBOX_CONFIRMING_CONSUMER_SETTINGS,
  // OUTBOX_TABLE is read only to confirm, with readOptionalSetting.
  'Outbox/PaymentConsumer': OUTBOX_CONFIRMING_CONSUMER_SETTINGS.filter(
    (setting) => setting !== OutboxSettings.outboxTable,
  ),
  Writer: WRITER_SETTINGS,
  Reader: [OutboxSettings.outboxTable],
};
const functionNames = Object.keys(SETTINGS_READ);
const ALL_SETTINGS: readonly Setting<unknown>[] = Object.values(OutboxSettings);

const deployed = (name: string) => deployedEnvironment(json, functionId(json, name));
const tableName = (key: string) => `deployed-${ids[key]}`;
const queueUrl = (key: string) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${ids[key]}`;

describe('the settings TransactionalOutbox writes', () => {
  it('covers every function it built', () => {
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(functionNames.length);
  });

  it.each(functionNames)(
    'are, for %s, literal values its reader accepts, wherever they are literal',
    (name) => {
      const environment = environmentOf(json, functionId(json, name));
      for (const setting of ALL_SETTINGS) {
        const value = environment[setting.name];
        if (typeof value === 'string') expect(() => setting.parse(value), setting.name).not.toThrow();
      }
    },
  );

  it.each(functionNames)('parse, for %s once deployed, with every reader it applies at start', (name) => {
    const env = deployed(name);
    for (const setting of SETTINGS_READ[name] ?? []) {
      expect(() => readSetting(env, setting), setting.name).not.toThrow();
    }
  });

  it('give the relay and the sweeper the routes, policies, deadline and retention they were given', () => {
    for (const name of ['Outbox/Relay', 'Outbox/Sweeper']) {
      const env = deployed(name);
      expect(readSetting(env, OutboxSettings.outboxTable), name).toBe(tableName('outbox'));
      expect(readSetting(env, OutboxSettings.topicQueues), name).toEqual({
        'order.created': queueUrl('ordersQueue'),
        'order.cancelled': queueUrl('ordersQueue'),
        'payment.captured': queueUrl('paymentsQueue'),
      });
      expect(readSetting(env, OutboxSettings.retryPolicies), name).toEqual({ 'order.created': ORDER_POLICY });
      expect(readSetting(env, OutboxSettings.confirmDeadlineMs), name).toBe(120_000);
      expect(readSetting(env, OutboxSettings.retentionDays), name).toBe(7);
    }
    const sweeper = deployed('Outbox/Sweeper');
    expect(readSetting(sweeper, OutboxSettings.dueShards)).toBe(16);
    expect(readSetting(sweeper, OutboxSettings.deliveryInboxes)).toEqual({
      'order.created': tableName('ordersInbox'),
      'order.cancelled': tableName('ordersInbox'),
      'payment.captured': tableName('paymentsInbox'),
    });
  });

  it('give every function but the reader the ordered topics, each with its scope and gap timeout in ms', () => {
    for (const name of functionNames.filter((candidate) => candidate !== 'Reader')) {
      expect(readSetting(deployed(name), OutboxSettings.orderedTopics), name).toEqual({
        'order.created': { scope: 'order', gapTimeoutMs: 120_000, sequence: 'counter' },
        'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'counter' },
      });
    }
    expect(environmentOf(json, functionId(json, 'Reader'))).not.toHaveProperty(
      OutboxSettings.orderedTopics.name,
    );
  });

  it('give a writer the sequence table and no other function', () => {
    expect(readSetting(deployed('Writer'), OutboxSettings.sequenceTable)).toBe(tableName('sequences'));
    for (const name of functionNames.filter((candidate) => candidate !== 'Writer')) {
      expect(environmentOf(json, functionId(json, name)), name).not.toHaveProperty(
        OutboxSettings.sequenceTable.name,
      );
    }
  });

  it('give a consumer its inbox, retention, queues and redrive count', () => {
    const env = deployed('Outbox/OrderConsumer');
    expect(readSetting(env, OutboxSettings.inboxTable)).toBe(tableName('ordersInbox'));
    expect(readSetting(env, OutboxSettings.inboxRetentionDays)).toBe(60);
    expect(readSetting(env, OutboxSettings.sourceQueueUrl)).toBe(queueUrl('ordersQueue'));
    expect(readSetting(env, OutboxSettings.deadLetterQueueUrl)).toBe(queueUrl('ordersDeadLetters'));
    expect(readSetting(env, OutboxSettings.maxReceiveCount)).toBe(3);
    expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outbox'));
    expect(readSetting(env, OutboxSettings.retentionDays)).toBe(7);
  });

  it('leave a consumer that does not confirm without the outbox', () => {
    expect(
      readOptionalSetting(deployed('Outbox/PaymentConsumer'), OutboxSettings.outboxTable),
    ).toBeUndefined();
  });

  it('give a writer the sweeper’s shards and the stream grace period', () => {
    const env = deployed('Writer');
    expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outbox'));
    expect(readSetting(env, OutboxSettings.dueShards)).toBe(
      readSetting(deployed('Outbox/Sweeper'), OutboxSettings.dueShards),
    );
    expect(readSetting(env, OutboxSettings.streamGraceMs)).toBe(30_000);
  });

  it('build the shipped relay and sweeper, the consumers and the writer', () => {
    expect(() => createRelayHandler().withEnv(deployed('Outbox/Relay'))).not.toThrow();
    expect(() => createSweeperHandler().withEnv(deployed('Outbox/Sweeper'))).not.toThrow();
    expect(isEnvHandler(consumerHandler)).toBe(true);
    expect(() => consumerHandler.withEnv(deployed('Outbox/OrderConsumer'))).not.toThrow();
    expect(() => consumerHandler.withEnv(deployed('Outbox/PaymentConsumer'))).not.toThrow();
    expect(() => writerHandler.withEnv(deployed('Writer'))).not.toThrow();
  });

  it('would not build a relay from a policy the construct refuses (the check the construct shares)', () => {
    const env = {
      ...deployed('Outbox/Relay'),
      RETRY_POLICIES: JSON.stringify({ 'order.created': { ...DEFAULT_RETRY_POLICY, maxAttempts: 0 } }),
    };
    expect(() => createRelayHandler().withEnv(env)).toThrow(/RETRY_POLICIES/);
  });
});
