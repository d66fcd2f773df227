import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  crashingAfterSend,
  FAULT_KINDS,
  FaultInjector,
  faultyConsumerDeps,
  faultyDocumentClient,
  faultyPublisher,
  InjectedFault,
  seededRandom,
  uniformRates,
} from '../../../infra/dev/drill/faults.ts';
import { poisonedDeliveries } from '../../../infra/dev/drill/order-factory.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import {
  envelope,
  FIXED_NOW,
  MEMORY_TABLE_SCHEMAS,
  outboxItem,
  testMessageId,
} from '../../support/factories.ts';

const QUEUE = 'memory://order-events';

/** Every fault, the hot SKU's conflicts included, at one rate. */
const everyFault = (rate: number) => ({ ...uniformRates(rate), hotSkuConflict: rate });

/** Faults that always (1) or never (0) happen, whatever the draw. */
const always = () => new FaultInjector(everyFault(1), seededRandom(1));
const never = () => new FaultInjector(everyFault(0), seededRandom(1));

describe('seededRandom', () => {
  it('replays the same draws for the same seed, in [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const draws = Array.from({ length: 1_000 }, () => a());

    expect(Array.from({ length: 1_000 }, () => b())).toEqual(draws);
    expect(draws.every((draw) => draw >= 0 && draw < 1)).toBe(true);
    expect(seededRandom(43)()).not.toBe(draws[0]);
  });
});

describe('FaultInjector', () => {
  it('injects each fault at its own rate and counts what it injected', () => {
    const faults = new FaultInjector({ ...everyFault(0), sqsTimeout: 1 }, seededRandom(7));

    expect(faults.roll('sqsTimeout')).toBe(true);
    expect(faults.roll('sqsTimeout')).toBe(true);
    expect(faults.roll('dynamoThrottle')).toBe(false);
    expect(faults.injected).toEqual({ ...everyFault(0), sqsTimeout: 2 });
  });

  it('injects roughly the configured fraction', () => {
    const faults = new FaultInjector(everyFault(0.1), seededRandom(3));
    for (let i = 0; i < 10_000; i += 1) faults.roll('sqsSendError');

    expect(faults.injected.sqsSendError).toBeGreaterThan(850);
    expect(faults.injected.sqsSendError).toBeLessThan(1_150);
  });

  it('injects nothing once disabled, so the system can settle', () => {
    const faults = always();
    faults.disable();

    expect(FAULT_KINDS.some((kind) => faults.roll(kind))).toBe(false);
  });
});

describe('InjectedFault', () => {
  it('looks like DynamoDB throttling for dynamoThrottle, so callers treat it as the real one', () => {
    expect(new InjectedFault('dynamoThrottle', 'x').name).toBe('ProvisionedThroughputExceededException');
    expect(new InjectedFault('sqsTimeout', 'x')).toMatchObject({
      name: 'InjectedFault',
      message: 'injected sqsTimeout: x',
    });
  });
});

describe('faultyPublisher', () => {
  it('rejects a poisoned message on every attempt and delivers the others', async () => {
    const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, () => FIXED_NOW);
    const poisoned = envelope({ messageId: testMessageId(1), aggregateId: 'order-poisoned' });
    const fine = envelope({ messageId: testMessageId(2), aggregateId: 'order-fine' });
    const poison = poisonedDeliveries({ orders: new Set(['order-poisoned']), createsOf: new Set() });
    const publisher = faultyPublisher(queues, never(), {
      poisoned: (message) => poison(message, 'inventory'),
    });

    const result = await publisher.publishBatch(QUEUE, [poisoned, fine]);

    expect(result.sent).toEqual([fine.messageId]);
    expect(result.failed).toEqual([
      { messageId: poisoned.messageId, error: 'InvalidMessageContents: poisoned by the drill' },
    ]);
    expect(queues.depth(QUEUE)).toBe(1);
  });

  it('rejects only the order.created of an order whose create alone is poisoned, and delivers its cancel', async () => {
    const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, () => FIXED_NOW);
    const created = envelope({
      messageId: testMessageId(1),
      aggregateId: 'order-stalled',
      topic: 'order.created',
    });
    const cancelled = envelope({
      messageId: testMessageId(2),
      aggregateId: 'order-stalled',
      topic: 'order.cancelled',
    });
    const poison = poisonedDeliveries({ orders: new Set(), createsOf: new Set(['order-stalled']) });
    const publisher = faultyPublisher(queues, never(), { poisoned: (message) => poison(message, 'loyalty') });

    const result = await publisher.publishBatch(QUEUE, [created, cancelled]);

    expect(result.sent).toEqual([cancelled.messageId]);
    expect(result.failed.map(({ messageId }) => messageId)).toEqual([created.messageId]);
  });

  it('takes a poisoned delivery once an operator fixed it, at that subscriber only', () => {
    const message = envelope({ messageId: testMessageId(1), aggregateId: 'order-poisoned' });
    const poison = poisonedDeliveries({
      orders: new Set(['order-poisoned']),
      createsOf: new Set(),
      healed: new Set([`${message.messageId}#loyalty`]),
    });

    expect(poison(message, 'loyalty')).toBe(false);
    expect(poison(message, 'inventory')).toBe(true);
  });

  it('fails the whole call on a timeout, before anything reaches the queue, and names the messages it took', async () => {
    const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, () => FIXED_NOW);
    const timedOut: string[] = [];
    const message = envelope();

    await expect(
      faultyPublisher(queues, always(), {
        poisoned: () => false,
        timedOut: (queueUrl, messages) =>
          timedOut.push(...messages.map(({ messageId }) => `${queueUrl} ${messageId}`)),
      }).publishBatch(QUEUE, [message]),
    ).rejects.toThrow('injected sqsTimeout');
    expect(queues.depth(QUEUE)).toBe(0);
    expect(timedOut).toEqual([`${QUEUE} ${message.messageId}`]);
  });
});

describe('faultyDocumentClient and crashingAfterSend', () => {
  it('throttles a call before it reaches the table, so nothing is half-written', async () => {
    const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const client = faultyDocumentClient(memory.asDocumentClient(), always());

    await expect(
      client.send(new PutCommand({ TableName: 'orders', Item: { orderId: 'o-1' } })),
    ).rejects.toThrow(expect.objectContaining({ name: 'ProvisionedThroughputExceededException' }));
    expect(memory.items('orders')).toEqual([]);
  });

  it('keeps a store with private fields working behind the proxy, and crashes only markSent', async () => {
    const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const message = outboxItem();
    await memory.send(new PutCommand({ TableName: 'outbox', Item: { ...message } }));
    const store = new DynamoOutboxStore({ client: memory.asDocumentClient(), tableName: 'outbox' });

    const mark = { messageId: message.messageId, now: FIXED_NOW };
    const crashed: string[] = [];
    // The crash comes after the mark was written: the message is left SENT, unsent.
    await expect(
      crashingAfterSend(store, always(), (key) => crashed.push(key)).markSent(mark),
    ).rejects.toThrow('injected relayCrashAfterSend');
    expect(memory.items('outbox')).toEqual([expect.objectContaining({ status: 'SENT' })]);
    expect(crashed).toEqual([message.messageId]);
    await expect(crashingAfterSend(store, always()).confirm(message.messageId, FIXED_NOW)).resolves.toBe(
      'CONFIRMED',
    );
    await expect(crashingAfterSend(store, never()).markSent(mark)).resolves.toBe('ALREADY_ADVANCED');
  });
});

describe('faultyConsumerDeps', () => {
  it('keeps a consumer without a confirmer without one', () => {
    const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const deps = faultyConsumerDeps(
      { client: memory.asDocumentClient(), inboxTable: 'inbox', clock: () => FIXED_NOW },
      always(),
    );

    expect(deps).not.toHaveProperty('confirmer');
  });

  it('crashes after the effect committed: the receipt is never sent, and nothing else changes', async () => {
    const memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const sent: string[] = [];
    const confirmer = {
      confirm: async (messageId: string) => {
        sent.push(messageId);
        return 'RECEIPT_SENT' as const;
      },
    };
    const deps = faultyConsumerDeps(
      { client: memory.asDocumentClient(), inboxTable: 'inbox', confirmer, clock: () => FIXED_NOW },
      new FaultInjector({ ...everyFault(0), consumerCrashAfterCommit: 1 }, seededRandom(1)),
    );

    await expect(deps.confirmer?.confirm('m-1', FIXED_NOW)).rejects.toThrow(
      'injected consumerCrashAfterCommit',
    );
    expect(sent).toEqual([]);
    await expect(
      deps.client.send(new PutCommand({ TableName: 'inbox', Item: { messageId: 'm-1' } })),
    ).resolves.toBeDefined();
  });
});
