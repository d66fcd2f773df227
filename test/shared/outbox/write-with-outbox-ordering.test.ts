import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type OutboxWriterOptions,
  outboxTransaction,
  SEQUENCE_ATTEMPTS,
  writeWithOutbox,
} from '../../../shared/aws/outbox-writer.ts';
import {
  ConfigError,
  InvalidMessageError,
  SequenceConflictError,
  TransactionConditionError,
  TransactionConflictError,
} from '../../../shared/errors.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { OrderingByTopic } from '../../../shared/ordering/ordering.ts';
import type { OutboxWrite } from '../../../shared/outbox/outbox-write.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW, MEMORY_TABLE_SCHEMAS, testMessageId } from '../../support/factories.ts';

const ORDERING: OrderingByTopic = {
  'order.created': { scope: 'order', gapTimeoutMs: 300_000 },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000 },
  'payment.captured': 'none',
};
/** Scope `order` numbered by the order's version instead of the counter. */
const VERSIONED: OrderingByTopic = {
  ...ORDERING,
  'order.created': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
  'order.cancelled': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' },
};

/** What the write sent to the in-memory DynamoDB: every request, in order. */
interface Recorded {
  readonly commands: unknown[];
  /** Called just before each transaction reaches the table: a rival writer may commit in between. */
  beforeCommit?: () => Promise<void>;
}

let memory: MemoryDocumentClient;
let recorded: Recorded;

/** The in-memory client, recording each command and letting a test act between a read and the commit. */
function recordingClient(): DynamoDBDocumentClient {
  return {
    send: async (command: unknown) => {
      recorded.commands.push(command);
      if (command instanceof TransactWriteCommand) await recorded.beforeCommit?.();
      return memory.send(command);
    },
  } as unknown as DynamoDBDocumentClient;
}

function writer(overrides: Partial<OutboxWriterOptions> = {}): OutboxWriterOptions {
  return {
    client: recordingClient(),
    outboxTable: 'outbox',
    ordering: ORDERING,
    sequenceTable: 'sequences',
    clock: () => FIXED_NOW,
    ...overrides,
  };
}

/** Another writer of the same service, straight to the table (not recorded). */
const rival: OutboxWriterOptions = {
  get client() {
    return memory.asDocumentClient();
  },
  outboxTable: 'outbox',
  ordering: ORDERING,
  sequenceTable: 'sequences',
  clock: () => FIXED_NOW,
};

const created = (n: number, aggregateId = 'order-1'): Envelope =>
  envelope({ messageId: testMessageId(n), aggregateId, topic: 'order.created' });
const cancelled = (n: number, aggregateId = 'order-1'): Envelope =>
  envelope({ messageId: testMessageId(n), aggregateId, topic: 'order.cancelled' });

const stored = (n: number) => memory.items('outbox').find((item) => item.messageId === testMessageId(n));
const counter = (orderKey: string) => memory.items('sequences').find((item) => item.orderKey === orderKey);
const transactions = () =>
  recorded.commands.filter(
    (command): command is TransactWriteCommand => command instanceof TransactWriteCommand,
  );
const counterReads = () =>
  recorded.commands.filter(
    (command): command is GetCommand =>
      command instanceof GetCommand && command.input.TableName === 'sequences',
  );

beforeEach(() => {
  memory = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS, { clock: () => FIXED_NOW });
  recorded = { commands: [] };
});

describe('writeWithOutbox numbers ordered messages from the sequence counter', () => {
  it('gives the first message of an order key seq 1 and creates its counter; the next message gets 2', async () => {
    await writeWithOutbox(writer(), { actions: [], messages: [created(1)] });
    await writeWithOutbox(writer(), { actions: [], messages: [cancelled(2)] });

    expect(stored(1)).toMatchObject({ orderKey: 'order#order-1', seq: 1 });
    expect(stored(2)).toMatchObject({ orderKey: 'order#order-1', seq: 2 });
    expect(counter('order#order-1')).toEqual({ orderKey: 'order#order-1', lastSeq: 2 });
  });

  it('reads the counter strongly consistent and moves it in the same transaction, after the message Puts', async () => {
    const orderPut: TransactWriteAction = {
      Put: {
        TableName: 'orders',
        Item: { orderId: 'order-1' },
        ConditionExpression: 'attribute_not_exists(orderId)',
      },
    };

    await writeWithOutbox(writer(), { actions: [orderPut], messages: [created(1)] });

    expect(counterReads().map((read) => read.input)).toEqual([
      expect.objectContaining({ Key: { orderKey: 'order#order-1' }, ConsistentRead: true }),
    ]);
    const items = transactions()[0]?.input.TransactItems ?? [];
    expect(items.map((item) => item.Put?.TableName ?? item.Update?.TableName)).toEqual([
      'orders',
      'outbox',
      'sequences',
    ]);
    expect(memory.itemCount('orders')).toBe(1);
  });

  it('numbers several messages of one aggregate in one write consecutively, in the order given', async () => {
    await writeWithOutbox(writer(), { actions: [], messages: [created(1)] });

    await writeWithOutbox(writer(), {
      actions: [],
      messages: [cancelled(2), created(3, 'order-2'), created(4), cancelled(5, 'order-2')],
    });

    expect([2, 4].map((n) => stored(n)?.seq)).toEqual([2, 3]);
    expect([3, 5].map((n) => stored(n)?.seq)).toEqual([1, 2]);
    expect(counter('order#order-1')?.lastSeq).toBe(3);
    expect(counter('order#order-2')?.lastSeq).toBe(2);
  });

  it('retries a write that lost the race for a seq: it gets the next one, under a new idempotency token', async () => {
    let rivalsLeft = 1;
    recorded.beforeCommit = async () => {
      if (rivalsLeft === 0) return;
      rivalsLeft -= 1;
      // Another writer takes seq 1 between this writer's read of the counter and its commit.
      await writeWithOutbox(rival, { actions: [], messages: [created(90)] });
    };

    await writeWithOutbox(writer(), { actions: [], messages: [cancelled(1)] });

    expect(stored(90)?.seq).toBe(1);
    expect(stored(1)?.seq).toBe(2);
    expect(counter('order#order-1')?.lastSeq).toBe(2);
    const tokens = transactions().map((transaction) => transaction.input.ClientRequestToken);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    for (const token of tokens) expect(token?.startsWith(testMessageId(1))).toBe(true);
    for (const token of tokens) expect(token?.length).toBeLessThanOrEqual(36);
    expect(counterReads()).toHaveLength(2);
  });

  it('gives up after the last attempt with SequenceConflictError, having written nothing', async () => {
    let rivalMessage = 100;
    recorded.beforeCommit = async () => {
      rivalMessage += 1;
      await writeWithOutbox(rival, { actions: [], messages: [created(rivalMessage)] });
    };

    const error = await writeWithOutbox(writer(), {
      actions: [{ Put: { TableName: 'orders', Item: { orderId: 'order-1' } } }],
      messages: [cancelled(1)],
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SequenceConflictError);
    expect(error).toBeInstanceOf(TransactionConflictError);
    expect(error).toMatchObject({ orderKeys: ['order#order-1'], attempts: SEQUENCE_ATTEMPTS });
    expect(transactions()).toHaveLength(SEQUENCE_ATTEMPTS);
    expect(new Set(transactions().map((t) => t.input.ClientRequestToken)).size).toBe(SEQUENCE_ATTEMPTS);
    expect(stored(1)).toBeUndefined();
    expect(memory.itemCount('orders')).toBe(0);
    expect(counter('order#order-1')?.lastSeq).toBe(SEQUENCE_ATTEMPTS);
  });

  it('reports a failed business condition as TransactionConditionError with its index, without retrying', async () => {
    await memory.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: { TableName: 'orders', Item: { orderId: 'order-1' } } }],
      }),
    );
    const orderPut: TransactWriteAction = {
      Put: {
        TableName: 'orders',
        Item: { orderId: 'order-1' },
        ConditionExpression: 'attribute_not_exists(orderId)',
      },
    };

    const error = await writeWithOutbox(writer(), { actions: [orderPut], messages: [created(1)] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0]);
    expect(transactions()).toHaveLength(1);
    expect(counter('order#order-1')).toBeUndefined();
  });

  it('reports a failed business condition even when the counter moved too, without retrying', async () => {
    await memory.send(
      new TransactWriteCommand({
        TransactItems: [{ Put: { TableName: 'orders', Item: { orderId: 'order-1' } } }],
      }),
    );
    recorded.beforeCommit = async () => {
      await writeWithOutbox(rival, { actions: [], messages: [created(90)] });
    };
    const orderPut: TransactWriteAction = {
      Put: {
        TableName: 'orders',
        Item: { orderId: 'order-1' },
        ConditionExpression: 'attribute_not_exists(orderId)',
      },
    };

    const error = await writeWithOutbox(writer(), { actions: [orderPut], messages: [cancelled(1)] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0, 2]);
    expect(transactions()).toHaveLength(1);
  });

  it('refuses a reused message id as the failed condition of its Put, not as a sequence race', async () => {
    await writeWithOutbox(writer(), { actions: [], messages: [created(1)] });

    const error = await writeWithOutbox(writer(), { actions: [], messages: [created(1)] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(TransactionConditionError);
    expect((error as TransactionConditionError).failedActions).toEqual([0]);
    expect(stored(1)?.seq).toBe(1);
    expect(counter('order#order-1')?.lastSeq).toBe(1);
  });

  it('refuses a counter that does not hold a whole number, naming the order key', async () => {
    await memory.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: 'sequences', Item: { orderKey: 'order#order-1', lastSeq: 'two' } } },
        ],
      }),
    );

    await expect(writeWithOutbox(writer(), { actions: [], messages: [created(1)] })).rejects.toThrow(
      /sequence counter of order#order-1 in sequences holds "two"/,
    );
    expect(transactions()).toHaveLength(0);
  });
});

describe('writeWithOutbox numbers ordered messages from aggregateVersions', () => {
  const versionedWriter = (overrides: Partial<OutboxWriterOptions> = {}) =>
    writer({ ordering: VERSIONED, ...overrides });

  it('gives the message the version as its seq and reads or writes no counter', async () => {
    const versionUpdate: TransactWriteAction = {
      Update: {
        TableName: 'orders',
        Key: { orderId: 'order-1' },
        UpdateExpression: 'SET #version = :v',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':v': 3 },
      },
    };

    await writeWithOutbox(versionedWriter(), {
      actions: [versionUpdate],
      messages: [cancelled(1)],
      aggregateVersions: { 'order-1': 3 },
    });

    expect(stored(1)).toMatchObject({ orderKey: 'order#order-1', seq: 3 });
    expect(memory.itemCount('sequences')).toBe(0);
    expect(counterReads()).toHaveLength(0);
    expect(transactions()[0]?.input.TransactItems).toHaveLength(2);
    expect(transactions()[0]?.input.ClientRequestToken).toBe(testMessageId(1));
  });

  it('gives two messages of the aggregate the seqs V-1 and V, in the order given', async () => {
    await writeWithOutbox(versionedWriter(), {
      actions: [],
      messages: [created(1), cancelled(2)],
      aggregateVersions: { 'order-1': 2 },
    });

    expect([stored(1)?.seq, stored(2)?.seq]).toEqual([1, 2]);
  });

  it('needs no sequence table', async () => {
    await writeWithOutbox(versionedWriter({ sequenceTable: undefined }), {
      actions: [],
      messages: [created(1)],
      aggregateVersions: { 'order-1': 1 },
    });

    expect(stored(1)?.seq).toBe(1);
  });

  it('refuses a message of the scope whose aggregate has no version in the write, and writes nothing', async () => {
    const write = writeWithOutbox(versionedWriter(), {
      actions: [],
      messages: [created(1), created(2, 'order-2')],
      aggregateVersions: { 'order-1': 1 },
    });

    await expect(write).rejects.toMatchObject({
      name: 'InvalidMessageError',
      path: 'aggregateVersions.order-2',
    });
    expect(recorded.commands).toHaveLength(0);
  });

  it('never gives one seq twice: a write of the scope without the version is refused, not numbered from a counter', async () => {
    // order.created took seq 1 from the order's version; a later message of the scope written without one must not
    // start a counter at 1 beside it (the consumer would take it for a duplicate and it would never apply).
    await writeWithOutbox(versionedWriter(), {
      actions: [],
      messages: [created(1)],
      aggregateVersions: { 'order-1': 1 },
    });
    const noteAdded = envelope({
      messageId: testMessageId(2),
      topic: 'order.cancelled',
      aggregateId: 'order-1',
    });

    await expect(
      writeWithOutbox(versionedWriter(), { actions: [], messages: [noteAdded] }),
    ).rejects.toBeInstanceOf(InvalidMessageError);
    expect(memory.itemCount('sequences')).toBe(0);
    expect(stored(2)).toBeUndefined();
  });

  it.each([
    ['0', 0, [created(1)]],
    ['1 for two messages', 1, [created(1), cancelled(2)]],
    ['a fraction', 1.5, [created(1)]],
    ['text', '2' as unknown as number, [created(1)]],
  ])(
    'refuses a version of %s with InvalidMessageError and writes nothing',
    async (_case, version, messages) => {
      const write = writeWithOutbox(versionedWriter(), {
        actions: [],
        messages,
        aggregateVersions: { 'order-1': version },
      });

      await expect(write).rejects.toBeInstanceOf(InvalidMessageError);
      await expect(write).rejects.toMatchObject({ path: 'aggregateVersions.order-1' });
      expect(recorded.commands).toHaveLength(0);
    },
  );
});

describe('writeWithOutbox leaves unordered messages as they were', () => {
  it('stores a message of an unordered topic exactly as without ordering, under the same token', async () => {
    const payment = envelope({
      messageId: testMessageId(1),
      topic: 'payment.captured',
      aggregateId: 'pay-1',
    });
    const write: OutboxWrite = { actions: [], messages: [payment] };

    await writeWithOutbox(writer(), write);

    const [transaction] = transactions();
    expect(transaction?.input.TransactItems).toEqual(
      outboxTransaction(write, { outboxTable: 'outbox', now: FIXED_NOW }),
    );
    expect(transaction?.input.ClientRequestToken).toBe(testMessageId(1));
    expect(stored(1)).not.toHaveProperty('orderKey');
    expect(stored(1)).not.toHaveProperty('seq');
    expect(counterReads()).toHaveLength(0);
  });

  it('numbers only the ordered messages of a mixed write', async () => {
    const payment = envelope({
      messageId: testMessageId(2),
      topic: 'payment.captured',
      aggregateId: 'order-1',
    });

    await writeWithOutbox(writer(), { actions: [], messages: [created(1), payment] });

    expect(stored(1)?.seq).toBe(1);
    expect(stored(2)).not.toHaveProperty('seq');
  });

  it('writes every topic unordered when no ordering is configured', async () => {
    await writeWithOutbox(writer({ ordering: undefined, sequenceTable: undefined }), {
      actions: [],
      messages: [created(1)],
    });

    expect(stored(1)).not.toHaveProperty('orderKey');
    expect(memory.itemCount('sequences')).toBe(0);
  });
});

describe('writeWithOutbox refuses, before anything is written', () => {
  it.each([
    ['orderKey', { orderKey: 'order#order-1', seq: 1 }, 'order.created'],
    ['seq', { seq: 3 }, 'payment.captured'],
  ])(
    'a message carrying its own %s (topic %s): InvalidMessageError, the writer assigns them',
    async (path, fields, topic) => {
      const write = writeWithOutbox(writer(), {
        actions: [],
        messages: [envelope({ messageId: testMessageId(1), topic, ...fields })],
      });

      await expect(write).rejects.toBeInstanceOf(InvalidMessageError);
      await expect(write).rejects.toMatchObject({ path });
      await expect(write).rejects.toThrow(/assigned by the writer/);
      expect(recorded.commands).toHaveLength(0);
    },
  );

  it('an aggregate id that makes the order key longer than 128 characters: InvalidMessageError', async () => {
    const write = writeWithOutbox(writer(), { actions: [], messages: [created(1, 'a'.repeat(123))] });

    await expect(write).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(write).rejects.toMatchObject({ path: 'aggregateId' });
    await expect(write).rejects.toThrow(/129 characters long; at most 128/);
    expect(recorded.commands).toHaveLength(0);
  });

  it('accepts the longest order key: scope, #, and an aggregate id of 122 characters', async () => {
    await writeWithOutbox(writer(), { actions: [], messages: [created(1, 'a'.repeat(122))] });

    expect(String(stored(1)?.orderKey)).toHaveLength(128);
  });

  it('an ordered message without its version when there is no sequence table: ConfigError naming SEQUENCE_TABLE', async () => {
    const write = writeWithOutbox(writer({ sequenceTable: undefined }), {
      actions: [],
      messages: [created(1)],
    });

    await expect(write).rejects.toBeInstanceOf(ConfigError);
    await expect(write).rejects.toThrow(/SEQUENCE_TABLE is not set, and order#order-1/);
    expect(recorded.commands).toHaveLength(0);
  });
});
