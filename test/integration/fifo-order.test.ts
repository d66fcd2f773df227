/**
 * The example with its order events on a FIFO queue (and a FIFO dead-letter queue), through the local runtime on
 * moto: the relay sends each order's messages in one message group with a deduplication id per delivery round,
 * the consumer takes them through the FIFO partial batch processor, dead-letters into the FIFO DLQ keeping the
 * group, parks a cancellation whose creation it has not applied, and applies it once the sweeper has resent the
 * creation in a new round.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planInventory } from '../../functions/inventory/apply-order/plan-inventory.ts';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { consumerParts, consumeSqsBatch } from '../../shared/lambda/consumer-handler.ts';
import { sweeperDeps } from '../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../shared/message/envelope.ts';
import { DEFAULT_GAP_TIMEOUT_MS } from '../../shared/ordering/ordering.ts';
import { requireEnv } from '../../shared/settings/setting.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../shared/sweeper/sweep.ts';
import { synthSingleQueueTemplate } from '../support/single-queue-example.ts';
import { cancelOrder, outboxItemOf, reservationOf, waitForConfirmed } from './support/order-cancel.ts';
import {
  outputOf,
  placeOrder,
  QueueOutput,
  scanAll,
  sqsClient,
  startRuntime,
  stockOf,
  waitFor,
} from './support.ts';

const quiet = { info: () => {}, warn: () => {} };

/** Orders whose creation the inventory downstream cannot take: every delivery of their `order.created` fails. */
const createRefused = new Set<string>();

/** Every record the inventory consumer was handed, in arrival order. */
const delivered: SQSRecord[] = [];

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime({
    template: synthSingleQueueTemplate({ fifo: true }),
    // A failed FIFO batch comes back after a second, not after the queue's visibility timeout.
    retryVisibilitySeconds: 1,
    handlers: {
      // The test runs the sweeper itself, at the time it chooses.
      'Outbox/Sweeper': () => async () => ({}),
      'Outbox/InventoryConsumer': (_base, env) => {
        const { plan, deps, failures } = consumerParts({ ...env, MAX_RECEIVE_COUNT: '2' }, (consumerEnv) =>
          planInventory(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date()),
        );
        const downstream: typeof plan = (message) => {
          if (message.topic === 'order.created' && createRefused.has(message.aggregateId)) {
            throw new Error('TimeoutError: inventory unavailable');
          }
          return plan(message);
        };
        return (event, context) => {
          delivered.push(...(event as SQSEvent).Records);
          return consumeSqsBatch(event as SQSEvent, context, {
            plan: downstream,
            deps,
            logger: quiet,
            failures,
          });
        };
      },
    },
  });
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

/** Group and deduplication id of each delivery of a message, in arrival order. */
function deliveriesOf(messageId: string): { group?: string; deduplicationId?: string }[] {
  return delivered
    .filter((record) => (JSON.parse(record.body) as Envelope).messageId === messageId)
    .map(({ attributes }) => ({
      ...(attributes.MessageGroupId === undefined ? {} : { group: attributes.MessageGroupId }),
      ...(attributes.MessageDeduplicationId === undefined
        ? {}
        : { deduplicationId: attributes.MessageDeduplicationId }),
    }));
}

/** One sweeper round at `at`, as a scheduled run would make it. */
function sweepAt(at: Date): Promise<SweepReport> {
  let rounds = 1;
  return sweep({
    ...sweeperDeps(runtime.env['Outbox/Sweeper'] ?? {}),
    clock: () => at,
    owner: `fifo-test-${at.getTime()}`,
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
  });
}

describe('order events on a FIFO queue (moto)', () => {
  it('sends an order’s create and cancel in one message group, one deduplication id per round, applied in order', async () => {
    expect(outputOf(runtime, QueueOutput.orderEvents)).toMatch(/\.fifo$/);
    const before = await stockOf(runtime, 'SKU-APPLE');
    const { orderId, messageId } = await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 2 }], 'fifo-1');
    const cancelled = await cancelOrder(runtime, orderId);

    const order = await waitForConfirmed(runtime, orderId, 2);

    expect(cancelled.status).toBe(202);
    expect(
      order.messages.map(({ topic, outcome }: { topic: string; outcome: string }) => [topic, outcome]),
    ).toEqual([
      ['order.created', 'APPLIED'],
      ['order.cancelled', 'RELEASED'],
    ]);
    expect(deliveriesOf(messageId)).toEqual([
      { group: `order#${orderId}`, deduplicationId: `${messageId}-0` },
    ]);
    expect(deliveriesOf(cancelled.body.messageId)).toEqual([
      { group: `order#${orderId}`, deduplicationId: `${cancelled.body.messageId}-0` },
    ]);
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before);
    expect(await reservationOf(runtime, orderId)).toBeUndefined();
  });

  it('dead-letters a failing create into the FIFO DLQ in its group, parks the cancel, and applies both after the sweeper resends the create in a new round', async () => {
    const before = await stockOf(runtime, 'SKU-BANANA');
    createRefused.add('fifo-2');
    const { orderId, messageId } = await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], 'fifo-2');
    const cancelled = await cancelOrder(runtime, orderId);
    const cancelId: string = cancelled.body.messageId;

    // Two receives, both failed: the consumer moves the create to the DLQ itself and acknowledges it. The cancel,
    // next in the group, must wait for its create: it is parked. (SQS hands it over once the create has left the
    // group; moto may hand it over while the create waits for its second receive. Parked either way.)
    const parked = await waitFor(
      async () => {
        const rows = await scanAll(runtime, 'inbox');
        return rows.find((row) => row.parkedMessageId === cancelId);
      },
      30_000,
      'the cancel to be parked',
    );
    // The create's copy in the FIFO DLQ (looked for until it is there: moto may park the cancel first).
    const deadLetter = await waitFor(
      async () => {
        const { Messages = [] } = await sqsClient(runtime).send(
          new ReceiveMessageCommand({
            QueueUrl: outputOf(runtime, QueueOutput.orderEventsDeadLetters),
            MaxNumberOfMessages: 10,
            MessageSystemAttributeNames: ['All'],
            VisibilityTimeout: 0,
          }),
        );
        return Messages.find((m) => (JSON.parse(m.Body ?? '{}') as Envelope).messageId === messageId);
      },
      30_000,
      'the create in the dead-letter queue',
    );
    expect(parked).toMatchObject({ orderKey: `order#${orderId}`, seq: 2, topic: 'order.cancelled' });
    expect(deadLetter.Attributes?.MessageGroupId).toBe(`order#${orderId}`);
    expect(await outboxItemOf(runtime, messageId)).toMatchObject({ status: 'SENT' });

    // The downstream is back. Past the gap timeout the sweeper resends the create the consumer never applied, in
    // delivery round 1: a new deduplication id, so SQS cannot drop it as a repeat of round 0 (SQS remembers an id
    // for 5 minutes after the message is gone; moto only while it is still queued, so the id itself is checked).
    createRefused.delete('fifo-2');
    const report = await sweepAt(
      new Date(Date.parse(String(parked.parkedAt)) + DEFAULT_GAP_TIMEOUT_MS + 1_000),
    );
    const order = await waitForConfirmed(runtime, orderId, 2);

    // One gap (the parked cancel), its create requeued and sent.
    expect(report).toMatchObject({
      orderingGaps: { 'order.cancelled': 1 },
      requeued: 1,
      sent: 1,
      problems: [],
    });
    expect(order.messages.map(({ outcome }: { outcome: string }) => outcome)).toEqual([
      'APPLIED',
      'RELEASED',
    ]);
    expect(deliveriesOf(messageId).map(({ deduplicationId }) => deduplicationId)).toEqual([
      `${messageId}-0`,
      `${messageId}-0`,
      `${messageId}-1`,
    ]);
    expect(new Set(deliveriesOf(messageId).map(({ group }) => group))).toEqual(new Set([`order#${orderId}`]));
    expect(await stockOf(runtime, 'SKU-BANANA')).toBe(before);
    expect(await reservationOf(runtime, orderId)).toBeUndefined();
    expect((await scanAll(runtime, 'inbox')).filter((row) => row.parkedMessageId === cancelId)).toEqual([]);
  });
});
