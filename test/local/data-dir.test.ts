/**
 * `npm start -- --data-dir <dir>`: the embedded backend on disk. npm start takes orders and is SIGKILLed right
 * after the last one is acknowledged, with messages in flight; a start on the same folder has every order,
 * delivers what was in flight, and the stock moves once per order. A damaged, foreign or busy folder is refused
 * with an error that names the folder and what to do.
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedBackend } from '../../infra/dev/local/backends/embedded/index.ts';
import {
  descendants,
  isAlive,
  killTree,
  type NpmStart,
  portInUse,
  RECOVERY_BOUND_MS,
  startNpm,
} from './support/npm-start.ts';

let dataDir: string;
const started: NpmStart[] = [];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'data-dir-'));
});

afterAll(() => {
  for (const npm of started) killTree([...descendants(npm.child.pid ?? -1), npm.child.pid ?? -1]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function npmStart(): Promise<NpmStart> {
  const npm = await startNpm(['--backend', 'embedded', '--data-dir', dataDir, '--no-hot-reload']);
  started.push(npm);
  return npm;
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
async function json(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

const ORDERS = 6;
const orderIds: string[] = [];
let stockBefore = 0;

describe('npm start -- --data-dir', () => {
  it('takes orders and dies by SIGKILL right after the last one is acknowledged', async () => {
    const npm = await npmStart();
    expect(npm.output()).toContain(`data       ${dataDir}`);
    stockBefore = (await json(`${npm.apiUrl}/inventory/SKU-APPLE`)).body.available;
    for (let index = 0; index < ORDERS; index += 1) {
      const created = await json(`${npm.apiUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'c-data', items: [{ sku: 'SKU-APPLE', quantity: 1 }] }),
      });
      expect(created.status).toBe(201);
      orderIds.push(created.body.orderId);
    }
    // No grace: whatever the backend acknowledged must already be on disk.
    const tree = descendants(npm.child.pid ?? -1);
    for (const pid of tree) process.kill(pid, 'SIGKILL');
    await expect.poll(() => tree.filter(isAlive), { timeout: 20_000 }).toEqual([]);
    await expect.poll(() => portInUse(npm.port), { timeout: 20_000 }).toBe(false);
  });

  it(
    'starts again on the folder with every order, delivers them all, and moves the stock once per order',
    async () => {
      const npm = await npmStart();
      for (const stack of ['OutboxOrders', 'OutboxInventory', 'OutboxLoyalty']) {
        expect(npm.output()).toMatch(
          new RegExp(`stack\\s+${stack}-local \\(unchanged, kept with its data\\)`),
        );
      }
      expect(npm.output()).toContain('stock      kept as it was: SKU-APPLE');
      // Within the pipeline's own bound: a kill between the relay's SENT mark and its send is resent by the sweeper.
      await expect
        .poll(
          async () => {
            const statuses = await Promise.all(
              orderIds.map(
                async (orderId) =>
                  (await json(`${npm.apiUrl}/orders/${orderId}`)).body?.messages?.[0]?.status,
              ),
            );
            return statuses.filter((status) => status !== 'CONFIRMED');
          },
          { timeout: RECOVERY_BOUND_MS, interval: 500 },
        )
        .toEqual([]);
      expect((await json(`${npm.apiUrl}/inventory/SKU-APPLE`)).body.available).toBe(stockBefore - ORDERS);
      // The restored stream, queues and tables go on working: an order taken now is relayed, applied and confirmed.
      const after = await json(`${npm.apiUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'c-data', items: [{ sku: 'SKU-APPLE', quantity: 1 }] }),
      });
      expect(after.status).toBe(201);
      await expect
        .poll(
          async () => (await json(`${npm.apiUrl}/orders/${after.body.orderId}`)).body?.messages?.[0]?.status,
          {
            timeout: 60_000,
            interval: 250,
          },
        )
        .toBe('CONFIRMED');
      expect((await json(`${npm.apiUrl}/inventory/SKU-APPLE`)).body.available).toBe(stockBefore - ORDERS - 1);
      // A clean stop folds the journal into the snapshot; the next start finds the same.
      process.kill(npm.child.pid ?? -1, 'SIGTERM');
      await npm.exited;
      expect(npm.output()).toMatch(/^stopped\.$/m);
      const again = await npmStart();
      expect((await json(`${again.apiUrl}/inventory/SKU-APPLE`)).body.available).toBe(
        stockBefore - ORDERS - 1,
      );
      process.kill(again.child.pid ?? -1, 'SIGTERM');
      await again.exited;
    },
    RECOVERY_BOUND_MS + 180_000,
  );
});

describe('what a data folder keeps', () => {
  it('keeps stream records with their images exact (numbers, sets, binaries) and their positions', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'records-'));
    const { CreateTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand } = await import(
      '@aws-sdk/client-dynamodb'
    );
    const { DynamoDBStreamsClient, DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand } =
      await import('@aws-sdk/client-dynamodb-streams');
    const config = (endpoint: string) => ({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const item = {
      id: { S: 'a' },
      amount: { N: '12345678901234567890.5' },
      tags: { SS: ['x', 'y'] },
      blob: { B: new Uint8Array([1, 2, 3]) },
    };
    const first = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    const dynamodb = new DynamoDBClient(config(first.endpoint));
    await dynamodb.send(
      new CreateTableCommand({
        TableName: 'kept',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await dynamodb.send(new PutItemCommand({ TableName: 'kept', Item: item }));
    dynamodb.destroy();
    // As after a kill: no clean stop, and a lock whose process is gone.
    writeFileSync(join(folder, 'lock'), '999999999\n');
    const second = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    const again = new DynamoDBClient(config(second.endpoint));
    const streams = new DynamoDBStreamsClient(config(second.endpoint));
    const { Table } = await again.send(new DescribeTableCommand({ TableName: 'kept' }));
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: Table?.LatestStreamArn }),
    );
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: Table?.LatestStreamArn,
        ShardId: StreamDescription?.Shards?.[0]?.ShardId,
        ShardIteratorType: 'TRIM_HORIZON',
      }),
    );
    const { Records } = await streams.send(new GetRecordsCommand({ ShardIterator }));
    expect(Records?.map((record) => [record.eventName, record.dynamodb?.NewImage])).toEqual([
      ['INSERT', item],
    ]);
    // The next write continues the shard's sequence.
    await again.send(new PutItemCommand({ TableName: 'kept', Item: { ...item, amount: { N: '1' } } }));
    const next = await streams.send(new GetRecordsCommand({ ShardIterator }));
    const numbers = next.Records?.map((record) => BigInt(record.dynamodb?.SequenceNumber ?? '0')) ?? [];
    expect(numbers).toHaveLength(2);
    expect((numbers[1] ?? 0n) > (numbers[0] ?? 0n)).toBe(true);
    again.destroy();
    streams.destroy();
    await second.stop();
    await first.stop().catch(() => {});
    rmSync(folder, { recursive: true, force: true });
  });
});

describe('a data folder that cannot be used', () => {
  it('refuses a folder of other files, naming them', async () => {
    const foreign = mkdtempSync(join(tmpdir(), 'foreign-'));
    writeFileSync(join(foreign, 'notes.txt'), 'not a backend');
    await expect(startEmbeddedBackend({ dataDir: foreign, log: () => {} })).rejects.toMatchObject({
      code: 'DATA_DIR_INVALID',
      message: expect.stringMatching(/holds files that are not the embedded backend's \(notes\.txt\)/),
    });
    rmSync(foreign, { recursive: true, force: true });
  });

  it('refuses a folder whose journal is damaged, rather than starting fresh', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'damaged-'));
    const first = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    await first.stop();
    const journal = readdirSync(folder).find((name) => name.startsWith('journal-'));
    if (journal === undefined) throw new Error('no journal written');
    appendFileSync(join(folder, journal), '00000000 {"k":"tables","entries":[]}\n');
    await expect(startEmbeddedBackend({ dataDir: folder, log: () => {} })).rejects.toMatchObject({
      code: 'DATA_DIR_INVALID',
      message: expect.stringMatching(/line 1 is damaged .*move the folder away to start fresh/),
    });
    rmSync(folder, { recursive: true, force: true });
  });

  it('drops a last line that a kill cut short (it was never acknowledged) and keeps what came before', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'torn-'));
    const first = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    const { CreateQueueCommand, ListQueuesCommand, SQSClient } = await import('@aws-sdk/client-sqs');
    const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
    const sqs = new SQSClient({ endpoint: first.endpoint, region: 'us-east-1', credentials });
    await sqs.send(new CreateQueueCommand({ QueueName: 'kept' }));
    sqs.destroy();
    // No clean stop: the journal holds the queue; then a write cut short, without its newline.
    const journal = readdirSync(folder).find((name) => name.startsWith('journal-'));
    if (journal === undefined) throw new Error('no journal written');
    appendFileSync(join(folder, journal), '1234abcd {"k":"queues","entr');
    writeFileSync(join(folder, 'lock'), '999999999\n');
    const second = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    const again = new SQSClient({ endpoint: second.endpoint, region: 'us-east-1', credentials });
    const { QueueUrls } = await again.send(new ListQueuesCommand({}));
    again.destroy();
    expect(QueueUrls?.map((url) => url.split('/').pop())).toEqual(['kept']);
    await second.stop();
    await first.stop().catch(() => {});
    rmSync(folder, { recursive: true, force: true });
  });

  it('refuses a folder another run is using', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'busy-'));
    const first = await startEmbeddedBackend({ dataDir: folder, log: () => {} });
    try {
      // The lock names this process; a run in another process would be refused. Here, a parent's pid stands in.
      writeFileSync(join(folder, 'lock'), `${process.ppid}\n`);
      await expect(startEmbeddedBackend({ dataDir: folder, log: () => {} })).rejects.toMatchObject({
        code: 'DATA_DIR_INVALID',
        message: expect.stringMatching(/another run \(pid \d+\) is using it/),
      });
    } finally {
      await first.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
