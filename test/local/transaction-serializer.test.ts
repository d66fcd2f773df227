/**
 * The forwarder the local runtime puts in front of an emulator: against a fake emulator that records what
 * reaches it (and how many writes and transactions at once), and against moto, whose cancelled transactions lose
 * the writes made beside them.
 */

import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/dev/local/backends/emulator-config.ts';
import { answersHttp, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import {
  PLAIN_WRITE_TARGETS,
  startTransactionSerializer,
  TRANSACT_WRITE_ITEMS_TARGET,
  type TransactionSerializer,
  writtenTables,
} from '../../infra/dev/local/backends/transaction-serializer.ts';
import { describeOnMoto } from '../integration/support/backend.ts';

/** What reached the fake emulator. */
interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

type Answer = (received: Received, response: ServerResponse) => unknown;

/** An HTTP server standing in for the emulator: it records requests and how many writes it held at once. */
interface FakeEmulator {
  readonly endpoint: string;
  readonly received: Received[];
  /** Transactions being answered right now, and the most ever at once. */
  readonly transactions: { inFlight: number; most: number };
  /** Plain writes (PutItem…) being answered right now, and the most ever at once. */
  readonly writes: { inFlight: number; most: number };
  /** How many requests arrived while a transaction and a plain write were being answered together. */
  readonly mixed: { count: number };
  answer: Answer;
  close(): Promise<void>;
}

async function startFakeEmulator(): Promise<FakeEmulator> {
  const fake = {
    received: [] as Received[],
    transactions: { inFlight: 0, most: 0 },
    writes: { inFlight: 0, most: 0 },
    mixed: { count: 0 },
    answer: ((_, response) => response.end('{}')) as Answer,
  };
  const server: Server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const received = {
        method: incoming.method,
        url: incoming.url,
        rawHeaders: incoming.rawHeaders,
        body: Buffer.concat(chunks),
      };
      fake.received.push(received);
      const amzTarget = incoming.headers['x-amz-target'];
      const counter =
        amzTarget === TRANSACT_WRITE_ITEMS_TARGET
          ? fake.transactions
          : typeof amzTarget === 'string' && PLAIN_WRITE_TARGETS.has(amzTarget)
            ? fake.writes
            : undefined;
      if (counter !== undefined) {
        counter.inFlight += 1;
        counter.most = Math.max(counter.most, counter.inFlight);
        if (fake.transactions.inFlight > 0 && fake.writes.inFlight > 0) fake.mixed.count += 1;
        response.once('close', () => {
          counter.inFlight -= 1;
        });
      }
      void fake.answer(received, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

interface Sent {
  readonly status: number | undefined;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

/** A request with exactly these headers (node:http, unlike fetch, sends a Host of our choosing). */
function send(
  endpoint: string,
  options: { readonly path?: string; readonly headers: readonly string[]; readonly body?: Buffer },
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.path ?? '/', endpoint);
    const outgoing = request(url, { method: 'POST', headers: [...options.headers] }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () =>
        resolve({ status: answer.statusCode, rawHeaders: answer.rawHeaders, body: Buffer.concat(chunks) }),
      );
      answer.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

function transaction(endpoint: string, body: string): Promise<Sent> {
  return send(endpoint, {
    headers: ['Host', new URL(endpoint).host, 'X-Amz-Target', TRANSACT_WRITE_ITEMS_TARGET],
    body: Buffer.from(body),
  });
}

/** A DynamoDB request of this operation (`PutItem`, `Query`…) whose body is `body`. */
function dynamodb(
  endpoint: string,
  options: { readonly operation: string; readonly body: string },
): Promise<Sent> {
  return send(endpoint, {
    headers: ['Host', new URL(endpoint).host, 'X-Amz-Target', `DynamoDB_20120810.${options.operation}`],
    body: Buffer.from(options.body),
  });
}

/** The bodies that reached the fake emulator, in arrival order. */
function bodies(fake: FakeEmulator): string[] {
  return fake.received.map((received) => received.body.toString());
}

/** Gates opened after each test, so a failed test leaves no request held for the next. */
const gates: (() => void)[] = [];

function gate(): { readonly opened: Promise<void>; open(): void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  gates.push(open);
  return { opened, open };
}

/** Header values by lower-cased name, repeats kept, from a raw header list. */
function headerValues(rawHeaders: readonly string[], name: string): string[] {
  return rawHeaders.filter((_, index) => index % 2 === 1 && rawHeaders[index - 1]?.toLowerCase() === name);
}

describe('startTransactionSerializer', () => {
  let fake: FakeEmulator;
  let serializer: TransactionSerializer;

  beforeAll(async () => {
    fake = await startFakeEmulator();
    serializer = await startTransactionSerializer({ upstream: fake.endpoint });
  });
  afterEach(async () => {
    for (const open of gates.splice(0)) open();
    await expect.poll(() => fake.transactions.inFlight + fake.writes.inFlight).toBe(0);
    fake.received.length = 0;
    fake.transactions.most = 0;
    fake.writes.most = 0;
    fake.mixed.count = 0;
    fake.answer = (_, response) => response.end('{}');
  });
  afterAll(async () => {
    await serializer.stop();
    await fake.close();
  });

  it('passes an ordinary request through unchanged: path, headers with Host, body bytes; and the answer too', async () => {
    fake.answer = (_, response) => {
      response.writeHead(418, 'Teapot', [
        'X-Amzn-RequestId',
        'req-1',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'Content-Type',
        'application/x-amz-json-1.0',
      ]);
      response.end(Buffer.from([0xff, 0x00, 0xfe, 0x7b]));
    };
    const body = Buffer.from([0x00, 0xc3, 0x28, 0x7b, 0x7d, 0xff]);
    const headers = [
      'Host',
      'dynamodb.us-east-1.amazonaws.com',
      'X-Amz-Target',
      'DynamoDB_20120810.GetItem',
      'Authorization',
      'AWS4-HMAC-SHA256 Credential=testing/20240101/us-east-1/dynamodb/aws4_request, Signature=abc',
      'X-Custom',
      'one',
      'X-Custom',
      'two',
      'Content-Length',
      String(body.length),
    ];
    const answer = await send(serializer.endpoint, { path: '/some/path?x=1&y=%2F', headers, body });

    expect(fake.received).toHaveLength(1);
    const [received] = fake.received;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/some/path?x=1&y=%2F');
    expect(received?.body.equals(body)).toBe(true);
    // Every header the client wrote, in its order and spelling; nothing is added but what keeps the connection.
    const forwarded = (received?.rawHeaders ?? []).filter((_, index, all) =>
      index % 2 === 0 ? all[index] !== 'Connection' : all[index - 1] !== 'Connection',
    );
    expect(forwarded).toEqual(headers);

    expect(answer.status).toBe(418);
    expect(headerValues(answer.rawHeaders, 'x-amzn-requestid')).toEqual(['req-1']);
    expect(headerValues(answer.rawHeaders, 'set-cookie')).toEqual(['a=1', 'b=2']);
    expect(headerValues(answer.rawHeaders, 'content-type')).toEqual(['application/x-amz-json-1.0']);
    expect(answer.body.equals(Buffer.from([0xff, 0x00, 0xfe, 0x7b]))).toBe(true);
  });

  it('streams an answer as the emulator writes it, not once it ends', async () => {
    const rest = gate();
    fake.answer = async (_, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('first part;');
      await rest.opened;
      response.end('second part');
    };
    const firstChunk = new Promise<string>((resolve, reject) => {
      const outgoing = request(`${serializer.endpoint}/stream`, (answer) => {
        answer.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        answer.resume();
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    // The first part arrives while the emulator still holds the rest.
    expect(await firstChunk).toBe('first part;');
    rest.open();
  });

  it('sends concurrent TransactWriteItems to the emulator one at a time, each answered with its own answer', async () => {
    fake.answer = async (received, response) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      response.end(`done ${received.body.toString()}`);
    };
    const count = 8;
    const answers = await Promise.all(
      Array.from({ length: count }, (_, index) => transaction(serializer.endpoint, `t${index}`)),
    );
    expect(answers.map((answer) => answer.body.toString())).toEqual(
      Array.from({ length: count }, (_, index) => `done t${index}`),
    );
    expect(fake.received).toHaveLength(count);
    expect(fake.transactions.most).toBe(1);

    // The same transactions sent straight to the fake emulator overlap: it does measure concurrency.
    fake.transactions.most = 0;
    await Promise.all(Array.from({ length: count }, (_, index) => transaction(fake.endpoint, `t${index}`)));
    expect(fake.transactions.most).toBeGreaterThan(1);
  });

  it('does not hold other requests behind a transaction in flight', async () => {
    const held = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString() === 'first') await held.opened;
      response.end(received.body);
    };
    const first = transaction(serializer.endpoint, 'first');
    await expect.poll(() => fake.received.length).toBe(1);
    const second = transaction(serializer.endpoint, 'second');
    const query = await send(serializer.endpoint, {
      headers: ['Host', 'localhost', 'X-Amz-Target', 'DynamoDB_20120810.Query'],
      body: Buffer.from('query'),
    });

    expect(query.body.toString()).toBe('query');
    // The second transaction waits for the first, which the emulator still holds.
    expect(fake.received.map((received) => received.body.toString())).toEqual(['first', 'query']);
    held.open();
    expect((await first).body.toString()).toBe('first');
    expect((await second).body.toString()).toBe('second');
    expect(fake.received.map((received) => received.body.toString())).toEqual(['first', 'query', 'second']);
  });

  it('holds a plain write that arrives during a transaction until the transaction is answered', async () => {
    const held = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString() === 'transaction') await held.opened;
      response.end(received.body);
    };
    const held1 = transaction(serializer.endpoint, 'transaction');
    await expect.poll(() => fake.received.length).toBe(1);
    const writes = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'].map((operation) =>
      dynamodb(serializer.endpoint, { operation, body: operation }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bodies(fake)).toEqual(['transaction']);

    held.open();
    expect((await held1).body.toString()).toBe('transaction');
    expect((await Promise.all(writes)).map((answer) => answer.body.toString())).toEqual([
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'BatchWriteItem',
    ]);
    expect(bodies(fake).slice(1).sort()).toEqual(['BatchWriteItem', 'DeleteItem', 'PutItem', 'UpdateItem']);
    expect(fake.mixed.count).toBe(0);
  });

  it('sends a transaction once the plain writes already sent are answered, and later writes after it', async () => {
    const writesHeld = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString().startsWith('early')) await writesHeld.opened;
      response.end(received.body);
    };
    const early = [1, 2].map((index) =>
      dynamodb(serializer.endpoint, { operation: 'PutItem', body: `early ${index}` }),
    );
    await expect.poll(() => fake.received.length).toBe(2);
    const waiting = transaction(serializer.endpoint, 'transaction');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Queued behind the waiting transaction, so a stream of writes cannot keep it waiting for ever.
    const late = dynamodb(serializer.endpoint, { operation: 'UpdateItem', body: 'late' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bodies(fake).sort()).toEqual(['early 1', 'early 2']);

    writesHeld.open();
    await Promise.all([...early, waiting, late]);
    expect(bodies(fake).slice(2)).toEqual(['transaction', 'late']);
    expect(fake.mixed.count).toBe(0);
  });

  it('sends plain writes to the emulator together', async () => {
    const count = 6;
    let arrived = 0;
    const allArrived = gate();
    fake.answer = async (_, response) => {
      arrived += 1;
      if (arrived === count) allArrived.open();
      // Each write is answered only once all of them reached the emulator: none waited for another.
      await allArrived.opened;
      response.end('{}');
    };
    const answers = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        dynamodb(serializer.endpoint, { operation: 'PutItem', body: `put ${index}` }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: count }, () => 200));
    expect(fake.writes.most).toBe(count);
  });

  it('sends plain writes to one table one at a time, beside those to other tables', async () => {
    const inFlight = new Map<string, number>();
    const most = new Map<string, number>();
    fake.answer = async (received, response) => {
      const table = String((JSON.parse(received.body.toString()) as { TableName?: unknown }).TableName);
      inFlight.set(table, (inFlight.get(table) ?? 0) + 1);
      most.set(table, Math.max(most.get(table) ?? 0, inFlight.get(table) ?? 0));
      // Answered a few turns later, so writes that were sent together overlap here.
      for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      inFlight.set(table, (inFlight.get(table) ?? 1) - 1);
      response.end('{}');
    };
    const update = (TableName: string, id: number) =>
      dynamodb(serializer.endpoint, {
        operation: 'UpdateItem',
        body: JSON.stringify({ TableName, Key: { id: { S: `m-${id}` } } }),
      });

    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((id) => update(id % 2 ? 'outbox' : 'inbox', id)),
    );

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // moto's items are unlocked: two updates of one item at once each read it, and one drops the other's change.
    expect(Object.fromEntries(most)).toEqual({ inbox: 1, outbox: 1 });
    expect(fake.writes.most).toBe(2);
  });

  it('lets reads and other requests through while a transaction is held', async () => {
    const held = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString() === 'transaction') await held.opened;
      response.end(received.body);
    };
    const first = transaction(serializer.endpoint, 'transaction');
    await expect.poll(() => fake.received.length).toBe(1);
    const reads = ['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems', 'DescribeTable'];
    const answers = await Promise.all([
      ...reads.map((operation) => dynamodb(serializer.endpoint, { operation, body: operation })),
      send(serializer.endpoint, {
        headers: ['Host', 'localhost', 'Content-Type', 'application/x-www-form-urlencoded'],
        body: Buffer.from('Action=SendMessage'),
      }),
    ]);
    expect(answers.map((answer) => answer.body.toString())).toEqual([...reads, 'Action=SendMessage']);
    held.open();
    expect((await first).body.toString()).toBe('transaction');
  });

  it('answers 413 to a plain write larger than DynamoDB accepts, without sending it', async () => {
    const answer = await dynamodb(serializer.endpoint, {
      operation: 'BatchWriteItem',
      body: 'x'.repeat(16 * 1024 * 1024 + 1),
    });
    expect(answer.status).toBe(413);
    expect(fake.received).toEqual([]);
    expect((await dynamodb(serializer.endpoint, { operation: 'PutItem', body: 'next' })).status).toBe(200);
  });

  it('does not send a queued transaction whose client hung up, since nobody would get its answer', async () => {
    const held = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString() === 'first') await held.opened;
      response.end(received.body);
    };
    const first = transaction(serializer.endpoint, 'first');
    await expect.poll(() => fake.received.length).toBe(1);
    const abandoned = request(`${serializer.endpoint}/`, {
      method: 'POST',
      headers: { 'x-amz-target': TRANSACT_WRITE_ITEMS_TARGET },
    });
    abandoned.on('error', () => {});
    abandoned.end('abandoned');
    await new Promise((resolve) => setTimeout(resolve, 50));
    abandoned.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    held.open();
    await first;
    expect((await transaction(serializer.endpoint, 'last')).body.toString()).toBe('last');
    expect(fake.received.map((received) => received.body.toString())).toEqual(['first', 'last']);
  });

  it('keeps a transaction whose client hung up in flight until the emulator answers it: no write goes beside it', async () => {
    const held = gate();
    fake.answer = async (received, response) => {
      if (received.body.toString() === 'transaction') await held.opened;
      response.end(received.body);
    };
    const impatient = request(`${serializer.endpoint}/`, {
      method: 'POST',
      headers: { 'x-amz-target': TRANSACT_WRITE_ITEMS_TARGET },
    });
    impatient.on('error', () => {});
    impatient.end('transaction');
    await expect.poll(() => fake.received.length).toBe(1);
    // The SDK times out and gives up; the emulator is still applying the transaction.
    impatient.destroy();
    const write = dynamodb(serializer.endpoint, { operation: 'PutItem', body: 'put' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bodies(fake)).toEqual(['transaction']);

    held.open();
    expect((await write).body.toString()).toBe('put');
    expect(bodies(fake)).toEqual(['transaction', 'put']);
    expect(fake.mixed.count).toBe(0);
  });

  it('answers 502 when the emulator drops a transaction, and sends the next one', async () => {
    fake.answer = (received, response) => {
      if (received.body.toString() === 'dropped') response.socket?.destroy();
      else response.end('ok');
    };
    const [dropped, next] = await Promise.all([
      transaction(serializer.endpoint, 'dropped'),
      transaction(serializer.endpoint, 'next'),
    ]);
    expect(dropped.status).toBe(502);
    expect(JSON.parse(dropped.body.toString())).toMatchObject({
      message: expect.stringContaining(`the emulator at ${fake.endpoint} did not answer`),
    });
    expect(next).toMatchObject({ status: 200 });
    expect(next.body.toString()).toBe('ok');
  });

  it('stops listening when stopped', async () => {
    const own = await startTransactionSerializer({ upstream: fake.endpoint });
    expect(await answersHttp(own.endpoint)).toBe(true);
    await own.stop();
    expect(await answersHttp(own.endpoint)).toBe(false);
    expect(await answersHttp(fake.endpoint)).toBe(true);
  });
});

/**
 * Runs `use` with a client that reaches a fresh moto through the forwarder, after creating there the table
 * `TableName` keyed on a string `id`; stops the client, the forwarder and moto afterwards.
 */
async function withTableBehindForwarder(
  TableName: string,
  use: (client: DynamoDBClient, TableName: string) => Promise<void>,
): Promise<void> {
  const moto = await startMotoServer();
  const serializer = await startTransactionSerializer({ upstream: moto.endpoint });
  const client = new DynamoDBClient({ ...emulatorClientConfig(serializer.endpoint), maxAttempts: 1 });
  try {
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );
    await use(client, TableName);
  } finally {
    client.destroy();
    await serializer.stop();
    await moto.stop();
  }
}

describeOnMoto('the forwarder exists for moto: this checks that moto keeps every write behind it')(
  'startTransactionSerializer in front of moto',
  () => {
    it('keeps every write of concurrent transactions and plain writes, cancelled transactions among them', async () => {
      await withTableBehindForwarder('serialized', async (client, TableName) => {
        // A few hundred items make moto's copy of the table slow enough for concurrent transactions to overlap.
        for (let batch = 0; batch < 12; batch += 1) {
          await client.send(
            new BatchWriteItemCommand({
              RequestItems: {
                [TableName]: Array.from({ length: 25 }, (_, index) => ({
                  PutRequest: {
                    Item: { id: { S: `seed-${batch * 25 + index}` }, pad: { S: 'x'.repeat(200) } },
                  },
                })),
              },
            }),
          );
        }
        const putNew = (id: string) =>
          client.send(
            new TransactWriteItemsCommand({
              TransactItems: [
                {
                  Put: {
                    TableName,
                    Item: { id: { S: id } },
                    ConditionExpression: 'attribute_not_exists(id)',
                  },
                },
              ],
            }),
          );
        const written: string[] = [];
        let cancelled = 0;
        const put: string[] = [];
        let transacting = true;
        // Plain PutItems land on the same table all along, as a relay marks messages SENT beside new orders.
        const putWhileTransacting = async (writer: number): Promise<void> => {
          for (let index = 0; transacting; index += 1) {
            const id = `put-${writer}-${index}`;
            await client.send(new PutItemCommand({ TableName, Item: { id: { S: id } } }));
            put.push(id);
          }
        };
        const putting = Promise.all([0, 1, 2].map(putWhileTransacting));
        try {
          for (let round = 0; round < 10; round += 1) {
            // Half of each round writes a new item, half are cancelled because their item exists.
            await Promise.all(
              Array.from({ length: 10 }, async (_, index) => {
                const id = index % 2 === 0 ? `round-${round}-${index}` : `seed-${index}`;
                try {
                  await putNew(id);
                  written.push(id);
                } catch (error) {
                  if (!(error instanceof TransactionCanceledException)) throw error;
                  cancelled += 1;
                }
              }),
            );
          }
        } finally {
          transacting = false;
          await putting;
        }
        const ids = new Set<string | undefined>();
        let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
        do {
          const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey }));
          for (const item of page.Items ?? []) ids.add(item.id?.S);
          ExclusiveStartKey = page.LastEvaluatedKey;
        } while (ExclusiveStartKey !== undefined);

        expect({ written: written.length, cancelled }).toEqual({ written: 50, cancelled: 50 });
        expect(put.length).toBeGreaterThan(30);
        expect(written.filter((id) => !ids.has(id))).toEqual([]);
        expect(put.filter((id) => !ids.has(id))).toEqual([]);
      });
    });
  },
);

describe('writtenTables', () => {
  it('names the table of a plain write, every table of a batch, and none for a body it cannot read', () => {
    expect(writtenTables(Buffer.from('{"TableName":"outbox","Key":{}}'))).toEqual(['outbox']);
    expect(writtenTables(Buffer.from('{"RequestItems":{"orders":[],"audit":[]}}'))).toEqual([
      'audit',
      'orders',
    ]);
    expect(writtenTables(Buffer.from('put 1'))).toEqual([]);
    expect(writtenTables(Buffer.from('{"Statement":"UPDATE outbox SET a = 1"}'))).toEqual([]);
  });
});

describeOnMoto('moto loses concurrent updates of one item; the forwarder is what keeps them')(
  'startTransactionSerializer in front of moto: updates of one item',
  () => {
    it('keeps every one of concurrent updates of one item, which moto drops when they run together', async () => {
      await withTableBehindForwarder('history', async (client, TableName) => {
        const kept: number[] = [];
        // As an outbox message's transitions append to its history: 20 at once, in 10 rounds (straight to moto, some
        // round kept fewer than 20 nearly every time).
        for (let round = 0; round < 10; round += 1) {
          const id = { S: `message-${round}` };
          await client.send(new PutItemCommand({ TableName, Item: { id, history: { L: [] } } }));
          await Promise.all(
            Array.from({ length: 20 }, (_, entry) =>
              client.send(
                new UpdateItemCommand({
                  TableName,
                  Key: { id },
                  UpdateExpression: 'SET #history = list_append(#history, :entry)',
                  ExpressionAttributeNames: { '#history': 'history' },
                  ExpressionAttributeValues: { ':entry': { L: [{ N: String(entry) }] } },
                }),
              ),
            ),
          );
          const { Item } = await client.send(
            new GetItemCommand({ TableName, Key: { id }, ConsistentRead: true }),
          );
          kept.push(Item?.history?.L?.length ?? 0);
        }

        expect(kept).toEqual(Array.from({ length: 10 }, () => 20));
      });
    });
  },
);
