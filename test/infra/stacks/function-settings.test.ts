import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_INBOX_RETENTION_DAYS } from '../../../shared/consumer/inbox-record.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { isEnvHandler } from '../../../shared/lambda/handler-from-env.ts';
import { DEFAULT_GAP_TIMEOUT_MS } from '../../../shared/ordering/ordering.ts';
import { DEFAULT_RETENTION_DAYS } from '../../../shared/outbox/outbox-defaults.ts';
import { DEFAULT_DUE_SHARDS, DEFAULT_STREAM_GRACE_MS } from '../../../shared/outbox/outbox-item.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import {
  ADMIN_SETTINGS,
  CONSUMER_SETTINGS,
  OutboxSettings,
  RELAY_SETTINGS,
  SWEEPER_SETTINGS,
  WRITER_SETTINGS,
} from '../../../shared/settings/outbox-settings.ts';
import { readSetting, type Setting } from '../../../shared/settings/setting.ts';
import { buildSingleQueueExample } from '../../support/single-queue-example.ts';
import { ORDER_MESSAGE_FUNCTIONS } from '../example-functions.ts';
import {
  type CfnTemplate,
  deployedEnvironment,
  entryOf,
  functionId,
  idsOfType,
  outputTarget,
  propertiesOf,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';

let json: CfnTemplate;

beforeAll(() => {
  json = templateOf(buildSingleQueueExample());
}, SYNTH_TIMEOUT_MS);

/**
 * The writer's settings of the order functions: each numbers its message from the order's version, so the stack
 * binds it without the sequence table (SEQUENCE_TABLE, which the writer reads only when set).
 */
const VERSIONED_WRITER_SETTINGS = WRITER_SETTINGS.filter(
  (setting) => setting !== OutboxSettings.sequenceTable,
);

/** What a consumer that confirms in the outbox reads: RECEIPT_QUEUE_URL and SUBSCRIBER only confirm by receipt. */
const OUTBOX_CONFIRMING_CONSUMER_SETTINGS = CONSUMER_SETTINGS.filter(
  (setting) => setting !== OutboxSettings.receiptQueueUrl && setting !== OutboxSettings.subscriber,
);

/** The settings each function of the example reads through the library's settings contract. */
const SETTINGS_READ: Readonly<Record<string, readonly Setting<unknown>[]>> = {
  'Outbox/Relay': RELAY_SETTINGS,
  'Outbox/Sweeper': SWEEPER_SETTINGS,
  'Outbox/InventoryConsumer': OUTBOX_CONFIRMING_CONSUMER_SETTINGS,
  CreateOrder: VERSIONED_WRITER_SETTINGS,
  CancelOrder: VERSIONED_WRITER_SETTINGS,
  GetOrder: [OutboxSettings.outboxTable],
  PutStock: [],
  GetStock: [],
  'Outbox/Admin': ADMIN_SETTINGS,
};
const functionNames = Object.keys(SETTINGS_READ);

/** What Lambda would put in `process.env` for the function, every reference resolved to a deployed value. */
const deployed = (name: string) => deployedEnvironment(json, functionId(json, name));
const queueUrl = (output: string) =>
  `https://sqs.eu-west-1.amazonaws.com/123456789012/${outputTarget(json, output)}`;
const tableName = (output: string) => `deployed-${outputTarget(json, output)}`;
/** The value of a setting keyed by topic when both order topics map to `value`. */
const bothOrderTopics = <T>(value: T) => ({ 'order.created': value, 'order.cancelled': value });

/** The handler a function's template names: the export of its entry module that `Handler` names. */
async function handlerOf(name: string): Promise<unknown> {
  const id = functionId(json, name);
  const entry = entryOf(json, id);
  if (entry === undefined) throw new Error(`${name} has no entry metadata`);
  const exportName = String(propertiesOf(json, id).Handler).split('.').at(-1) ?? '';
  const module = (await import(pathToFileURL(resolve(entry)).href)) as Record<string, unknown>;
  return module[exportName];
}

describe('the settings the stack writes', () => {
  it.each(functionNames)('parse with the readers %s applies at start', (name) => {
    const env = deployed(name);
    for (const setting of SETTINGS_READ[name] ?? []) {
      expect(() => readSetting(env, setting), setting.name).not.toThrow();
    }
  });

  it('give the relay and the sweeper the documented defaults and the example’s routes', () => {
    for (const name of ['Outbox/Relay', 'Outbox/Sweeper']) {
      const env = deployed(name);
      expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outboxTableName'));
      expect(readSetting(env, OutboxSettings.topicQueues)).toEqual(
        bothOrderTopics(queueUrl('orderEventsQueueUrl')),
      );
      expect(readSetting(env, OutboxSettings.retryPolicies)).toEqual({});
      expect(readSetting(env, OutboxSettings.confirmDeadlineMs)).toBe(DEFAULT_CONFIRM_DEADLINE_MS);
      expect(readSetting(env, OutboxSettings.retentionDays)).toBe(DEFAULT_RETENTION_DAYS);
    }
    const sweeper = deployed('Outbox/Sweeper');
    expect(readSetting(sweeper, OutboxSettings.dueShards)).toBe(DEFAULT_DUE_SHARDS);
    expect(readSetting(sweeper, OutboxSettings.deliveryInboxes)).toEqual(
      bothOrderTopics(tableName('inboxTableName')),
    );
  });

  it('give the consumer its inbox, its queues and the redrive count of its queue', () => {
    const env = deployed('Outbox/InventoryConsumer');
    expect(readSetting(env, OutboxSettings.inboxTable)).toBe(tableName('inboxTableName'));
    expect(readSetting(env, OutboxSettings.inboxRetentionDays)).toBe(DEFAULT_INBOX_RETENTION_DAYS);
    expect(readSetting(env, OutboxSettings.sourceQueueUrl)).toBe(queueUrl('orderEventsQueueUrl'));
    expect(readSetting(env, OutboxSettings.deadLetterQueueUrl)).toBe(
      queueUrl('orderEventsDeadLetterQueueUrl'),
    );
    const redrive = propertiesOf(json, outputTarget(json, 'orderEventsQueueUrl')).RedrivePolicy as {
      maxReceiveCount: number;
    };
    expect(readSetting(env, OutboxSettings.maxReceiveCount)).toBe(redrive.maxReceiveCount);
    expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outboxTableName'));
  });

  it('give the admin API the outbox, the audit trail, each topic’s queue, dead-letter queue and inbox', () => {
    const env = deployed('Outbox/Admin');
    expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outboxTableName'));
    expect(readSetting(env, OutboxSettings.topicQueues)).toEqual(
      bothOrderTopics(queueUrl('orderEventsQueueUrl')),
    );
    expect(readSetting(env, OutboxSettings.deadLetterQueues)).toEqual(
      bothOrderTopics(queueUrl('orderEventsDeadLetterQueueUrl')),
    );
    expect(readSetting(env, OutboxSettings.deliveryInboxes)).toEqual(
      bothOrderTopics(tableName('inboxTableName')),
    );
    expect(readSetting(env, OutboxSettings.dueShards)).toBe(
      readSetting(deployed('Outbox/Sweeper'), OutboxSettings.dueShards),
    );
    expect(readSetting(env, OutboxSettings.retentionDays)).toBe(DEFAULT_RETENTION_DAYS);
  });

  it.each(['CreateOrder', 'CancelOrder'])(
    'give the order writer %s the sweeper’s shard count and the default stream grace period',
    (name) => {
      const env = deployed(name);
      expect(readSetting(env, OutboxSettings.outboxTable)).toBe(tableName('outboxTableName'));
      expect(readSetting(env, OutboxSettings.dueShards)).toBe(
        readSetting(deployed('Outbox/Sweeper'), OutboxSettings.dueShards),
      );
      expect(readSetting(env, OutboxSettings.streamGraceMs)).toBe(DEFAULT_STREAM_GRACE_MS);
    },
  );

  it('give every function that handles order messages both order topics in one sequence, scope order', () => {
    const ordered = bothOrderTopics({
      scope: 'order',
      gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS,
      sequence: 'aggregate-version',
    });
    for (const name of ORDER_MESSAGE_FUNCTIONS) {
      expect(readSetting(deployed(name), OutboxSettings.orderedTopics), name).toEqual(ordered);
    }
  });

  it('give the order writers no sequence table: each numbers its message from the order’s version', () => {
    for (const name of ['CreateOrder', 'CancelOrder']) {
      expect(deployed(name)[OutboxSettings.sequenceTable.name], name).toBeUndefined();
    }
  });
});

describe('each function’s handler', () => {
  it('is found for every function of the stack', () => {
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(functionNames.length);
  });

  it.each(functionNames)(
    'of %s is exported under the name Handler gives, and builds from its environment',
    async (name) => {
      const handler = await handlerOf(name);
      expect(isEnvHandler(handler), name).toBe(true);
      if (!isEnvHandler(handler)) return;
      expect(() => handler.withEnv(deployed(name))).not.toThrow();
    },
  );

  it('refuses at start a value the construct must never write, naming the variable', async () => {
    const relay = await handlerOf('Outbox/Relay');
    if (!isEnvHandler(relay)) throw new Error('the relay is not built from its environment');
    const env = { ...deployed('Outbox/Relay'), CONFIRM_DEADLINE_MS: '10' };
    expect(() => relay.withEnv(env)).toThrow(ConfigError);
    expect(() => relay.withEnv(env)).toThrow(/CONFIRM_DEADLINE_MS/);
  });
});
