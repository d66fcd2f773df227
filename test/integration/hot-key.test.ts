/**
 * Many orders for one SKU, consumed concurrently: their transactions on the SKU's stock item conflict. moto never
 * answers TransactionConflict, so the consumer's DynamoDB client is wrapped with DynamoDB's optimistic
 * concurrency: a transaction touching an item that another transaction in flight holds is cancelled with
 * `TransactionConflict`, as DynamoDB cancels it. Every order must end CONFIRMED, the stock must move exactly once
 * per order, and nothing may be dead-lettered: contention alone never spends a message's receives.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { requireEnv } from 'serverless-outbox';
import { consumerParts, consumeSqsBatch, type SqsConsumer } from 'serverless-outbox/lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planStockReservation } from '../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { toLambdaSqsRecord } from '../../infra/dev/local/events/sqs-event.ts';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { outputOf, QueueOutput, request, scanAll, sqsClient, startRuntime, waitFor } from './support.ts';

const ORDERS = 100;
const HOT_SKU = 'SKU-HOT';
const CONSUMER = 'Outbox/InventoryConsumer';

/** Conflicts this run has seen: the test is only meaningful if contention really happened. */
let conflicts = 0;

/** A Document client with DynamoDB's optimistic concurrency over the items a transaction touches. */
function contended(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const held = new Set<string>();
  const send = async (command: unknown) => {
    if (!(command instanceof TransactWriteCommand)) return client.send(command as never);
    const keys = itemKeys(command.input);
    if (keys.some((key) => held.has(key))) {
      conflicts += 1;
      await sleep(2);
      throw new TransactionCanceledException({
        message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
        $metadata: {},
        CancellationReasons: keys.map(() => ({ Code: 'TransactionConflict' })),
      });
    }
    for (const key of keys) held.add(key);
    try {
      return await client.send(command);
    } finally {
      for (const key of keys) held.delete(key);
    }
  };
  return new Proxy(client, {
    get: (target, property) => (property === 'send' ? send : Reflect.get(target, property)),
  });
}

function itemKeys(input: TransactWriteCommandInput): string[] {
  return (input.TransactItems ?? []).map((action) => {
    const write = action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck;
    const key = action.Put
      ? { messageId: action.Put.Item?.messageId }
      : write && 'Key' in write
        ? write.Key
        : {};
    return `${write?.TableName}/${JSON.stringify(key)}`;
  });
}

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime({
    pollersPaused: true,
    handlers: {
      [CONSUMER]: (_base, env) => {
        const parts = consumerParts(env, (consumerEnv) =>
          planStockReservation(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date()),
        );
        const consumer: SqsConsumer = {
          ...parts,
          deps: { ...parts.deps, client: contended(parts.deps.client) },
          logger: { info: () => {}, warn: () => {} },
        };
        return (event, context) => consumeSqsBatch(event as SQSEvent, context, consumer);
      },
    },
  });
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

describe('a burst of orders for one SKU', () => {
  it(`confirms ${ORDERS} concurrent orders, moves the stock exactly once each, and dead-letters none`, async () => {
    expect((await request(runtime, `PUT /inventory/${HOT_SKU}`, { available: 1_000 })).status).toBe(200);
    // Ten POSTs in flight at a time: what this test loads is the consumer; a hundred transactions at once only
    // stress moto's own locking.
    const posted: Awaited<ReturnType<typeof request>>[] = [];
    for (let first = 0; first < ORDERS; first += 10) {
      posted.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, (_, offset) =>
            request(runtime, 'POST /orders', {
              orderId: `hot-${first + offset}`,
              customerId: `customer-${first + offset}`,
              items: [{ sku: HOT_SKU, quantity: 1 }],
            }),
          ),
        )),
      );
    }
    expect(posted.filter((response) => response.status !== 201)).toEqual([]);

    // The relay alone, until every message is on the queue.
    const relayName = runtime.functions['Outbox/Relay']?.name;
    const relay = runtime.pollers.find((poller) => poller.functionName === relayName);
    if (relay === undefined) throw new Error('no relay poller');
    await waitFor(
      async () => {
        await relay.pollOnce();
        const outbox = await scanAll(runtime, 'outbox');
        return outbox.filter((m) => m.status !== 'PENDING').length >= ORDERS ? true : undefined;
      },
      120_000,
      'the relay to send every message',
    );

    // Ten invocations at once, each with a batch of ten, as Lambda scales an SQS mapping out.
    const sqs = sqsClient(runtime);
    const queueUrl = outputOf(runtime, QueueOutput.orderEvents);
    const batches: Message[][] = [];
    while (batches.flat().length < ORDERS) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
          VisibilityTimeout: 120,
        }),
      );
      if (Messages.length > 0) batches.push(Messages);
    }
    const source = { queueArn: 'arn:aws:sqs:us-east-1:123456789012:order-events', region: 'us-east-1' };
    const invocations = await Promise.all(
      batches.map((messages) =>
        runtime.invoke(CONSUMER, { Records: messages.map((m) => toLambdaSqsRecord(m, source)) }),
      ),
    );
    for (const invocation of invocations) {
      expect(invocation.ok).toBe(true);
      // Nothing failed outright: every record was applied, or requeued as a fresh copy to try again.
      if (invocation.ok) expect((invocation.result as SQSBatchResponse).batchItemFailures).toEqual([]);
    }
    expect(conflicts).toBeGreaterThan(0);
    // The received copies are done (applied, or requeued as fresh copies): delete them, as Lambda does.
    for (const messages of batches) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    // The requeued copies are new messages: they come back after their short delay; the pollers take them.
    runtime.resumePollers();

    await waitFor(
      async () => {
        const outbox = await scanAll(runtime, 'outbox');
        const hot = outbox.filter((m) => String(m.aggregateId).startsWith('hot-'));
        return hot.length === ORDERS && hot.every((m) => m.status === 'CONFIRMED') ? true : undefined;
      },
      120_000,
      'every hot order to be CONFIRMED',
    );
    const stock = await request(runtime, `GET /inventory/${HOT_SKU}`);
    expect(stock.body.available).toBe(1_000 - ORDERS);
    const inbox = await scanAll(runtime, 'inbox');
    expect(inbox.filter((row) => row.outcome === 'APPLIED').length).toBeGreaterThanOrEqual(ORDERS);
    const { Messages: deadLetters = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: outputOf(runtime, QueueOutput.orderEventsDeadLetters),
        MaxNumberOfMessages: 10,
      }),
    );
    expect(deadLetters).toEqual([]);
  }, 300_000);
});
