import { SQSClient } from '@aws-sdk/client-sqs';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../shared/errors.ts';
import { createSweeperHandler, sweeperDeps } from '../../../shared/lambda/sweeper-handler.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { DEFAULT_SWEEPER_SETTINGS } from '../../../shared/sweeper/sweep.ts';
import { FIXED_NOW, lambdaContext, outboxItem, testMessageId } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const env = {
  OUTBOX_TABLE: 'outbox-table',
  TOPIC_QUEUES: JSON.stringify({ 'order.created': QUEUE }),
  DELIVERY_INBOXES: JSON.stringify({ 'order.created': 'inventory-inbox' }),
  DUE_SHARDS: '3',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  // Metrics are asserted in the *-metrics tests; here they would only clutter stdout.
  POWERTOOLS_METRICS_DISABLED: 'true',
};
const handler = createSweeperHandler();

/** A SENT message whose confirmation deadline has passed, due in shard 0. */
const unconfirmed = outboxItem({
  messageId: testMessageId(5),
  status: MessageStatus.SENT,
  attempts: 1,
  dueShard: '0',
  nextAttemptAt: new Date(FIXED_NOW.getTime() - 1_000).toISOString(),
});

/** A context with time for exactly one round: the sweeper stops starting rounds 5 s before its timeout. */
function oneRoundContext(): Context {
  let calls = 0;
  return {
    ...lambdaContext(),
    awsRequestId: 'sweep-run-1',
    getRemainingTimeInMillis: () => {
      calls += 1;
      return calls === 1 ? 6_000 : 4_000;
    },
  };
}

/** The due shards the sweep queried (the backlog gauges' queries name their partition `:pk`). */
function queriedShards(): unknown[] {
  return ddb
    .commandCalls(QueryCommand)
    .flatMap((call) => {
      const { ExpressionAttributeValues, Limit } = call.args[0].input;
      const shard = ExpressionAttributeValues?.[':shard'];
      // A run that finds nothing due looks one entry ahead per shard (Limit 1) before it ends: not a page.
      return shard === undefined || Limit === 1 ? [] : [shard];
    })
    .sort();
}

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  vi.useFakeTimers({ now: FIXED_NOW, toFake: ['Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('createSweeperHandler, built from an environment', () => {
  it.each(['OUTBOX_TABLE', 'TOPIC_QUEUES'])('fails loudly at start with a ConfigError naming %s', (name) => {
    const incomplete = { ...env, [name]: undefined };

    expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
    expect(() => handler.withEnv(incomplete)).toThrow(`${name} is not set`);
  });

  it.each([
    ['DUE_SHARDS', '0'],
    ['DUE_SHARDS', '65'],
    ['DUE_SHARDS', 'eight'],
    ['DELIVERY_INBOXES', '{"order.created":"a"}'],
    ['DELIVERY_INBOXES', 'inventory-inbox'],
    ['RETRY_POLICIES', '[]'],
    ['CONFIRM_DEADLINE_MS', '1e6'],
  ])('fails loudly with a ConfigError naming %s when it is "%s"', (name, value) => {
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, [name]: value })).toThrow(name);
  });

  it("queries every configured due shard of OUTBOX_TABLE's due index, and stops before its timeout", async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });

    const report = await handler.withEnv(env)({}, oneRoundContext());

    expect(report).toMatchObject({ rounds: 1, claimed: 0, errors: 0 });
    expect(queriedShards()).toEqual(['0', '1', '2']);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'outbox-table',
      IndexName: 'due',
    });
  });

  it("queries each subscriber's own due partitions beside the plain ones, from SUBSCRIPTIONS", async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    const subscriptions = {
      'order.created': { loyalty: 'https://sqs.local/loyalty', inventory: 'https://sqs.local/inventory' },
    };

    await handler.withEnv({ ...env, SUBSCRIPTIONS: JSON.stringify(subscriptions) })({}, oneRoundContext());

    expect([...queriedShards()].sort()).toEqual(
      [
        '0',
        '1',
        '2',
        '0#inventory',
        '1#inventory',
        '2#inventory',
        '0#loyalty',
        '1#loyalty',
        '2#loyalty',
      ].sort(),
    );
  });

  it('skips the plain partitions when every topic goes to subscribers (TOPIC_QUEUES empty)', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    const subscriptions = { 'order.created': { loyalty: 'https://sqs.local/loyalty' } };

    await handler.withEnv({ ...env, TOPIC_QUEUES: '{}', SUBSCRIPTIONS: JSON.stringify(subscriptions) })(
      {},
      oneRoundContext(),
    );

    expect([...queriedShards()].sort()).toEqual(['0#loyalty', '1#loyalty', '2#loyalty']);
  });

  it('queries the default number of shards when DUE_SHARDS is not set', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });

    await handler.withEnv({ ...env, DUE_SHARDS: undefined })({}, oneRoundContext());

    expect(queriedShards()).toHaveLength(DEFAULT_SWEEPER_SETTINGS.dueShards);
  });

  it("claims under the run's request id, asks the topic's DELIVERY_INBOXES table and confirms a delivered message", async () => {
    ddb.on(QueryCommand).callsFake(async (input: QueryCommandInput) => ({
      Items: input.ExpressionAttributeValues?.[':shard'] === '0' ? [unconfirmed] : [],
    }));
    // The claim answers with the whole message, as the table stores it.
    ddb
      .on(UpdateCommand)
      .callsFake(async (input: UpdateCommandInput) =>
        input.ReturnValues === 'ALL_NEW' ? { Attributes: unconfirmed } : {},
      );
    ddb.on(GetCommand).resolves({ Item: { messageId: unconfirmed.messageId } });

    const report = await handler.withEnv(env)({}, oneRoundContext());

    expect(report).toMatchObject({ claimed: 1, reconciledConfirmed: 1, requeued: 0, errors: 0 });
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'inventory-inbox',
      Key: { messageId: unconfirmed.messageId },
      ConsistentRead: true,
    });
    const updates = ddb.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(updates[0]).toMatchObject({
      TableName: 'outbox-table',
      ExpressionAttributeValues: expect.objectContaining({ ':owner': 'sweep-run-1', ':status0': 'SENT' }),
    });
    expect(updates[1]).toMatchObject({
      TableName: 'outbox-table',
      ExpressionAttributeValues: expect.objectContaining({ ':to': 'CONFIRMED' }),
    });
  });
});

describe('sweeperDeps', () => {
  it('has a delivery check only for the topics DELIVERY_INBOXES names', () => {
    const deps = sweeperDeps(env);

    expect(deps.deliveryCheckFor('order.created')).toBeTypeOf('function');
    expect(deps.deliveryCheckFor('order.shipped')).toBeUndefined();
    expect(deps.deliveryCheckFor('constructor')).toBeUndefined();
  });

  it('uses the default sweeper settings with the configured due shards', () => {
    expect(sweeperDeps(env).settings).toEqual({
      ...DEFAULT_SWEEPER_SETTINGS,
      dueShards: 3,
      subscribers: [],
      plainShards: true,
    });
  });

  it('knows the gap timeout of each topic ORDERED_TOPICS names, and no ordering for the others', () => {
    const ordered = { 'order.created': { scope: 'order', gapTimeoutMs: 120_000 } };
    const deps = sweeperDeps({ ...env, ORDERED_TOPICS: JSON.stringify(ordered) });

    expect(deps.orderingFor?.('order.created')).toEqual({ scope: 'order', gapTimeoutMs: 120_000 });
    expect(deps.orderingFor?.('order.shipped')).toBeUndefined();
    expect(sweeperDeps(env).orderingFor?.('order.created')).toBeUndefined();
  });

  it('fails loudly at start with a ConfigError naming ORDERED_TOPICS when it is malformed', () => {
    expect(() => sweeperDeps({ ...env, ORDERED_TOPICS: '{"order.created":{"scope":"Order"}}' })).toThrow(
      /ORDERED_TOPICS/,
    );
  });

  it('has no delivery check at all when DELIVERY_INBOXES is not set', () => {
    expect(sweeperDeps({ ...env, DELIVERY_INBOXES: undefined }).deliveryCheckFor('order.created')).toBe(
      undefined,
    );
  });
});
