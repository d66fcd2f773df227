import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { planStockReservation } from '../../functions/inventory/apply-order/plan-stock-reservation.ts';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { consumerParts, consumeSqsBatch } from '../../shared/lambda/consumer-handler.ts';
import { relayDeps } from '../../shared/lambda/relay-handler.ts';
import { relayStreamBatch } from '../../shared/lambda/relay-stream-batch.ts';
import { sweeperDeps } from '../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../shared/message/envelope.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../shared/outbox/outbox-store.ts';
import type { MessagePublisher } from '../../shared/relay/message-publisher.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../shared/retry/retry-policy.ts';
import { requireEnv } from '../../shared/settings/setting.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../shared/sweeper/sweep.ts';
import {
  documentClient,
  placeOrder,
  scanAll,
  startRuntime,
  stockOf,
  tableName,
  waitFor,
  waitForMessageStatus,
} from './support.ts';

const quiet = { info: () => {}, warn: () => {} };

/** Faults by order id, switched on by each test. */
const faults = {
  /** The relay never sees these orders' stream records (as if the stream lost them). */
  dropStream: new Set<string>(),
  /** SQS rejects these orders' messages this many more times (Infinity: forever). */
  rejectSends: new Map<string, number>(),
  /** The consumer applies these but its confirmation is lost. */
  loseConfirm: new Set<string>(),
  /** The consumer acknowledges these without applying them (a delivery lost downstream). */
  loseDelivery: new Set<string>(),
  /** The consumer fails these once, transiently, before the effect. */
  failOnce: new Set<string>(),
};
const sends = new Map<string, number>();
const receives = new Map<string, number>();

/** Counts every send and rejects the ones the test asked for. */
function faultyPublisher(publisher: MessagePublisher): MessagePublisher {
  return {
    publishBatch: async (queueUrl: string, messages: readonly Envelope[]) => {
      const rejected = messages.filter((m) => (faults.rejectSends.get(m.aggregateId) ?? 0) > 0);
      for (const m of rejected)
        faults.rejectSends.set(m.aggregateId, (faults.rejectSends.get(m.aggregateId) ?? 1) - 1);
      const result = await publisher.publishBatch(
        queueUrl,
        messages.filter((m) => !rejected.includes(m)),
      );
      for (const id of result.sent) sends.set(id, (sends.get(id) ?? 0) + 1);
      return {
        sent: result.sent,
        failed: [
          ...result.failed,
          ...rejected.map((m) => ({ messageId: m.messageId, error: 'InternalError: rejected by the test' })),
        ],
      };
    },
  };
}

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime({
    handlers: {
      // The tests drive the sweeper themselves, with their own clock.
      'Outbox/Sweeper': () => async () => ({}),
      'Outbox/Relay': (_base, env) => {
        const deps = relayDeps(env);
        const relay = { ...deps, publisher: faultyPublisher(deps.publisher) };
        return (event) => {
          const records = (event as DynamoDBStreamEvent).Records.filter(
            (record) => !faults.dropStream.has(String(record.dynamodb?.NewImage?.aggregateId?.S)),
          );
          return relayStreamBatch({ Records: records }, relay, quiet);
        };
      },
      'Outbox/InventoryConsumer': (_base, env) => {
        const { plan, deps, failures } = consumerParts(
          { ...env, VISIBILITY_BACKOFF_BASE_SECONDS: '1' },
          (consumerEnv) => planStockReservation(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date()),
        );
        const confirmer = deps.confirmer;
        const orderOf = new Map<string, string>();
        const faultyDeps = {
          ...deps,
          ...(confirmer === undefined
            ? {}
            : {
                confirmer: {
                  // The effect committed, but the confirmation never reaches the outbox.
                  confirm: async (messageId: string, now: Date) =>
                    faults.loseConfirm.has(orderOf.get(messageId) ?? '')
                      ? ('CONFIRMED' as const)
                      : confirmer.confirm(messageId, now),
                },
              }),
        };
        const faultyPlan: typeof plan = (message) => {
          if (faults.failOnce.delete(message.aggregateId))
            throw new Error('TimeoutError: inventory unavailable');
          return plan(message);
        };
        return (event, context) => {
          const records = (event as SQSEvent).Records.filter((record) => {
            const body = JSON.parse(record.body) as { messageId: string; aggregateId: string };
            orderOf.set(body.messageId, body.aggregateId);
            receives.set(body.messageId, (receives.get(body.messageId) ?? 0) + 1);
            return !faults.loseDelivery.delete(body.aggregateId);
          });
          return consumeSqsBatch({ Records: records }, context, {
            plan: faultyPlan,
            deps: faultyDeps,
            logger: quiet,
            failures,
          });
        };
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

beforeEach(() => {
  sends.clear();
});

/** One sweeper round at a given time, as a scheduled run would do it. */
function sweepAt(
  at: Date,
  options: { owner?: string; retryPolicy?: RetryPolicy; rounds?: number } = {},
): Promise<SweepReport> {
  const deps = sweeperDeps(runtime.env['Outbox/Sweeper'] ?? {});
  let rounds = options.rounds ?? 1;
  return sweep({
    ...deps,
    publisher: faultyPublisher(deps.publisher),
    ...(options.retryPolicy === undefined
      ? {}
      : { retryPolicyFor: () => options.retryPolicy as RetryPolicy }),
    clock: () => at,
    random: () => 0.999,
    owner: options.owner ?? `test-sweeper-${at.getTime()}`,
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
  });
}

async function outboxItemOf(orderId: string): Promise<Record<string, unknown>> {
  const item = (await scanAll(runtime, 'outbox')).find((m) => m.aggregateId === orderId);
  if (!item) throw new Error(`no outbox message for ${orderId}`);
  return item;
}

const later = (ms: number) => new Date(Date.now() + ms);

describe('recovery by the sweeper (moto)', () => {
  it('delivers a PENDING message whose stream record was dropped', async () => {
    faults.dropStream.add('order-lost-stream');
    const before = await stockOf(runtime, 'SKU-APPLE');
    await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 2 }], 'order-lost-stream');
    await runtime.drain();
    expect(await outboxItemOf('order-lost-stream')).toMatchObject({ status: 'PENDING', attempts: 0 });

    // Not yet due: the stream gets a grace period before the sweeper steps in.
    expect((await sweepAt(new Date())).claimed).toBe(0);
    const report = await sweepAt(later(61_000));

    expect(report.sent).toBeGreaterThanOrEqual(1);
    await waitForMessageStatus(runtime, 'order-lost-stream', 'CONFIRMED');
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before - 2);
  });

  it('retries with exponential backoff after send failures, then delivers', async () => {
    faults.rejectSends.set('order-retry', 2);
    await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], 'order-retry');
    const first = await waitFor(async () => {
      const item = await outboxItemOf('order-retry');
      return item.attempts === 1 ? item : undefined;
    });
    // The relay's own attempt failed: due again within the first backoff ceiling (2 s).
    const firstDelay = Date.parse(String(first.nextAttemptAt)) - Date.parse(String(first.updatedAt));
    expect(firstDelay).toBeGreaterThanOrEqual(0);
    expect(firstDelay).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.baseDelayMs);

    const secondAt = new Date(Date.parse(String(first.nextAttemptAt)) + 1);
    await sweepAt(secondAt);
    const second = await outboxItemOf('order-retry');
    expect(second).toMatchObject({
      status: 'PENDING',
      attempts: 2,
      lastError: expect.stringContaining('rejected by the test'),
    });
    const secondDelay = Date.parse(String(second.nextAttemptAt)) - secondAt.getTime();
    expect(secondDelay).toBeGreaterThan(firstDelay);
    expect(secondDelay).toBeLessThanOrEqual(
      DEFAULT_RETRY_POLICY.baseDelayMs * DEFAULT_RETRY_POLICY.multiplier,
    );

    await sweepAt(new Date(Date.parse(String(second.nextAttemptAt)) + 1));
    await waitForMessageStatus(runtime, 'order-retry', 'CONFIRMED');
    expect((await outboxItemOf('order-retry')).attempts).toBe(3);
  });

  it('moves a message to FAILED after its last attempt, keeping payload, attempts and lastError', async () => {
    faults.rejectSends.set('order-poison', Number.POSITIVE_INFINITY);
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
    await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], 'order-poison');
    let item = await waitFor(async () => {
      const found = await outboxItemOf('order-poison');
      return found.attempts === 1 ? found : undefined;
    });
    // Polled, not counted: a send in flight (the relay's, retried on a loaded machine) leaves the message SENT for a
    // moment, so each sweep waits for the pipeline to settle and acts on the message as it then is. The policy's three
    // attempts bound it: the loop ends at FAILED, and the assertions below say after how many attempts.
    for (let run = 0; run < 10 && item.status !== 'FAILED'; run += 1) {
      await runtime.drain();
      item = await outboxItemOf('order-poison');
      if (item.status !== 'PENDING') continue;
      await sweepAt(new Date(Date.parse(String(item.nextAttemptAt)) + 1), { retryPolicy: policy });
      item = await outboxItemOf('order-poison');
    }

    expect(item).toMatchObject({
      status: 'FAILED',
      attempts: 3,
      lastError: expect.stringContaining('rejected by the test'),
      payload: expect.objectContaining({ orderId: 'order-poison' }),
    });
    // Out of the due index: no sweeper will pick it up again until an operator replays it.
    expect(item.dueShard).toBeUndefined();
    expect((await sweepAt(later(3_600_000), { retryPolicy: policy })).claimed).toBe(0);
  });

  it('recovers a claim whose owner crashed, and leaves a live claim alone', async () => {
    faults.dropStream.add('order-stale-claim');
    faults.dropStream.add('order-live-claim');
    await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 1 }], 'order-stale-claim');
    await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 1 }], 'order-live-claim');
    await runtime.drain();
    const client = documentClient(runtime);
    const claim = async (orderId: string, leaseUntil: Date) => {
      const { messageId } = await outboxItemOf(orderId);
      await client.send(
        new UpdateCommand({
          TableName: tableName(runtime, 'outbox'),
          Key: { messageId },
          UpdateExpression: 'SET leaseOwner = :owner, leaseUntil = :until, nextAttemptAt = :until',
          ExpressionAttributeValues: { ':owner': 'crashed-sweeper', ':until': leaseUntil.toISOString() },
        }),
      );
    };
    await claim('order-stale-claim', new Date(Date.now() - 1_000));
    await claim('order-live-claim', later(10 * 60_000));

    await sweepAt(new Date());

    await waitForMessageStatus(runtime, 'order-stale-claim', 'CONFIRMED');
    expect(await outboxItemOf('order-live-claim')).toMatchObject({
      status: 'PENDING',
      leaseOwner: 'crashed-sweeper',
    });
  });

  it('sends each due message once when two sweepers run at the same time', async () => {
    const orderIds = ['order-race-1', 'order-race-2', 'order-race-3', 'order-race-4'];
    for (const orderId of orderIds) faults.dropStream.add(orderId);
    for (const orderId of orderIds) await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], orderId);
    await runtime.drain();

    const at = later(61_000);
    const [a, b] = await Promise.all([
      sweepAt(at, { owner: 'sweeper-a' }),
      sweepAt(at, { owner: 'sweeper-b' }),
    ]);

    const messageIds = await Promise.all(
      orderIds.map(async (orderId) => String((await outboxItemOf(orderId)).messageId)),
    );
    for (const messageId of messageIds) expect(sends.get(messageId), messageId).toBe(1);
    expect((a?.claimed ?? 0) + (b?.claimed ?? 0)).toBe(orderIds.length);
    for (const orderId of orderIds) await waitForMessageStatus(runtime, orderId, 'CONFIRMED');
  });

  it('reconciles a SENT message whose confirmation was lost: CONFIRMED from the inbox, no resend', async () => {
    faults.loseConfirm.add('order-lost-confirm');
    const before = await stockOf(runtime, 'SKU-CHERRY');
    await placeOrder(runtime, [{ sku: 'SKU-CHERRY', quantity: 1 }], 'order-lost-confirm');
    await waitFor(async () => ((await stockOf(runtime, 'SKU-CHERRY')) === before - 1 ? true : undefined));
    await runtime.drain();
    expect(await outboxItemOf('order-lost-confirm')).toMatchObject({ status: 'SENT' });

    const report = await sweepAt(later(DEFAULT_CONFIRM_DEADLINE_MS + 1_000));

    expect(report.reconciledConfirmed).toBeGreaterThanOrEqual(1);
    expect(await outboxItemOf('order-lost-confirm')).toMatchObject({ status: 'CONFIRMED' });
    // Sent once, by the relay; reconciliation asked the inbox instead of sending again.
    expect(sends.get(String((await outboxItemOf('order-lost-confirm')).messageId))).toBe(1);
    expect(await stockOf(runtime, 'SKU-CHERRY')).toBe(before - 1);
  });

  it('resends a SENT message the downstream never received, and applies it once', async () => {
    faults.loseDelivery.add('order-lost-delivery');
    const before = await stockOf(runtime, 'SKU-CHERRY');
    await placeOrder(runtime, [{ sku: 'SKU-CHERRY', quantity: 2 }], 'order-lost-delivery');
    await waitFor(async () =>
      (await outboxItemOf('order-lost-delivery')).status === 'SENT' ? true : undefined,
    );
    await runtime.drain();
    expect(await stockOf(runtime, 'SKU-CHERRY')).toBe(before);

    const report = await sweepAt(later(DEFAULT_CONFIRM_DEADLINE_MS + 1_000));

    expect(report.requeued).toBeGreaterThanOrEqual(1);
    await waitForMessageStatus(runtime, 'order-lost-delivery', 'CONFIRMED');
    expect(await stockOf(runtime, 'SKU-CHERRY')).toBe(before - 2);
  });

  it('retries a transient consumer error later, with backoff, and applies the effect once', async () => {
    faults.failOnce.add('order-transient');
    const before = await stockOf(runtime, 'SKU-DATE');
    const { messageId } = await placeOrder(runtime, [{ sku: 'SKU-DATE', quantity: 1 }], 'order-transient');

    await waitForMessageStatus(runtime, 'order-transient', 'CONFIRMED');

    expect(receives.get(messageId)).toBeGreaterThanOrEqual(2);
    expect(await stockOf(runtime, 'SKU-DATE')).toBe(before - 1);
    expect((await scanAll(runtime, 'inbox')).filter((row) => row.messageId === messageId)).toHaveLength(1);
  });
});
