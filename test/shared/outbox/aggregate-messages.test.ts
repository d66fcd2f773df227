import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_READ_CONCURRENCY,
  OUTBOX_KEYS,
  type OutboxReader,
  readAggregateMessages,
  readMessagesById,
} from '../../../shared/aws/outbox-table.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { outboxItem, testMessageId } from '../../support/factories.ts';

const id = testMessageId;
const { aggregateIndex } = OUTBOX_KEYS;

let db: MemoryDocumentClient;
/** Every command sent, in order. */
let sent: unknown[];
let reader: OutboxReader;

beforeEach(() => {
  // The index as the construct defines it: keys only.
  db = new MemoryDocumentClient({
    outbox: {
      partitionKey: OUTBOX_KEYS.partitionKey,
      globalIndexes: [
        {
          name: aggregateIndex.name,
          partitionKey: aggregateIndex.partitionKey,
          sortKey: aggregateIndex.sortKey,
          projection: aggregateIndex.projection,
        },
      ],
    },
  });
  sent = [];
  reader = { client: recording(db.asDocumentClient()), outboxTable: 'outbox' };
});

function recording(client: Pick<DynamoDBDocumentClient, 'send'>): Pick<DynamoDBDocumentClient, 'send'> {
  return {
    send: ((command: unknown) => {
      sent.push(command);
      return client.send(command as never);
    }) as DynamoDBDocumentClient['send'],
  };
}

async function store(n: number, aggregateId: string, extra: Record<string, unknown> = {}): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: 'outbox',
      Item: { ...outboxItem({ messageId: id(n), aggregateId }), ...extra },
    }),
  );
}

const reads = () => sent.filter((command): command is GetCommand => command instanceof GetCommand);

describe('readAggregateMessages', () => {
  it("reads every message of the aggregate by key, oldest id first, and no other aggregate's", async () => {
    await store(3, 'order-7', { status: 'CONFIRMED', outcome: 'APPLIED' });
    await store(1, 'order-7', { status: 'FAILED', lastError: 'QueueDoesNotExist' });
    await store(2, 'order-8');

    const messages = await readAggregateMessages(reader, {
      aggregateId: 'order-7',
      attributes: ['status', 'outcome', 'lastError'],
    });

    expect(messages).toEqual([
      { messageId: id(1), status: 'FAILED', lastError: 'QueueDoesNotExist' },
      { messageId: id(3), status: 'CONFIRMED', outcome: 'APPLIED' },
    ]);
  });

  it('asks the index for keys only and reads only the attributes asked for, never the payload', async () => {
    await store(1, 'order-7');

    await readAggregateMessages(reader, { aggregateId: 'order-7', attributes: ['status', 'topic'] });

    const query = sent.find((command) => command instanceof QueryCommand) as QueryCommand;
    expect(query.input).toMatchObject({ IndexName: 'byAggregate' });
    expect(query.input.FilterExpression).toBeUndefined();
    expect(reads()).toHaveLength(1);
    const read = reads()[0]?.input;
    expect(read?.Key).toEqual({ messageId: id(1) });
    expect(Object.values(read?.ExpressionAttributeNames ?? {}).sort()).toEqual([
      'messageId',
      'status',
      'topic',
    ]);
  });

  it('leaves out a message deleted between the index read and the read by key', async () => {
    await store(1, 'order-7');
    await store(2, 'order-7');
    const inner = db.asDocumentClient();
    const racing: OutboxReader = {
      outboxTable: 'outbox',
      client: {
        send: (async (command: unknown) => {
          const answer = await inner.send(command as never);
          // An erase removes message 1 right after the index named it.
          if (command instanceof QueryCommand) {
            await inner.send(new DeleteCommand({ TableName: 'outbox', Key: { messageId: id(1) } }));
          }
          return answer;
        }) as DynamoDBDocumentClient['send'],
      },
    };

    const messages = await readAggregateMessages(racing, { aggregateId: 'order-7', attributes: ['status'] });

    expect(messages).toEqual([{ messageId: id(2), status: 'PENDING' }]);
  });

  it('follows every page of the index', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    try {
      ddb
        .on(QueryCommand)
        .resolvesOnce({ Items: [{ messageId: id(1), aggregateId: 'order-7' }], LastEvaluatedKey: { k: '1' } })
        .resolvesOnce({ Items: [{ messageId: id(2), aggregateId: 'order-7' }] });
      ddb.on(GetCommand).callsFake((input: { Key: { messageId: string } }) => ({
        Item: { messageId: input.Key.messageId, status: 'SENT' },
      }));
      const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

      const messages = await readAggregateMessages(
        { client, outboxTable: 'outbox' },
        { aggregateId: 'order-7', attributes: ['status'] },
      );

      expect(messages.map((message) => message.messageId)).toEqual([id(1), id(2)]);
      expect(ddb.commandCalls(QueryCommand)[1]?.args[0].input.ExclusiveStartKey).toEqual({ k: '1' });
    } finally {
      ddb.restore();
    }
  });
});

describe('readMessagesById', () => {
  /** A client whose reads wait until released, counting how many are pending at once. */
  function slowReads() {
    const inner = db.asDocumentClient();
    const state = { pending: 0, mostPending: 0, started: 0 };
    const client = {
      send: (async (command: unknown) => {
        if (!(command instanceof GetCommand)) return inner.send(command as never);
        state.started += 1;
        state.pending += 1;
        state.mostPending = Math.max(state.mostPending, state.pending);
        await new Promise((resolve) => setTimeout(resolve, 1));
        state.pending -= 1;
        if (command.input.Key?.messageId === id(3)) throw new Error('ProvisionedThroughputExceeded');
        return inner.send(command as never);
      }) as DynamoDBDocumentClient['send'],
    };
    return { state, reader: { client, outboxTable: 'outbox' } };
  }

  it('keeps at most `concurrency` reads in flight and answers in the order of the ids', async () => {
    const ids = [5, 1, 4, 2, 6, 7, 8].map(id);
    for (const messageId of ids)
      await db.send(new PutCommand({ TableName: 'outbox', Item: outboxItem({ messageId }) }));
    const { state, reader: slow } = slowReads();

    const messages = await readMessagesById(slow, { messageIds: ids, attributes: [], concurrency: 3 });

    expect(messages.map((message) => message.messageId)).toEqual(ids);
    expect(state.mostPending).toBe(3);
  });

  it(`reads ${DEFAULT_READ_CONCURRENCY} at a time by default`, async () => {
    const ids = Array.from({ length: 25 }, (_, n) => id(n + 10));
    const { state, reader: slow } = slowReads();

    expect(await readMessagesById(slow, { messageIds: ids, attributes: [] })).toEqual([]);
    expect(state.mostPending).toBe(DEFAULT_READ_CONCURRENCY);
  });

  it('fails with the first failed read and starts no read after it', async () => {
    const ids = Array.from({ length: 20 }, (_, n) => id(n + 1));
    const { state, reader: slow } = slowReads();

    await expect(readMessagesById(slow, { messageIds: ids, attributes: [], concurrency: 2 })).rejects.toThrow(
      'ProvisionedThroughputExceeded',
    );
    // Reads 1-4 started before 3 failed; the read of 4 was in flight and finishes, nothing else starts.
    expect(state.started).toBe(4);
  });

  it.each([0, 1.5, Number.NaN])('refuses a concurrency of %s', async (concurrency) => {
    await expect(
      readMessagesById(reader, { messageIds: [id(1)], attributes: [], concurrency }),
    ).rejects.toThrow(RangeError);
    expect(sent).toEqual([]);
  });
});
