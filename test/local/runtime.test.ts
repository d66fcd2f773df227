import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.ts';
import { DEFAULT_STOCK } from '../../infra/local/seed-stock.ts';
import {
  deadLetterQueueOutputName,
  type FunctionKey,
  type QueueKey,
  queueOutputName,
  type TableKey,
  tableOutputName,
  topology,
} from '../../infra/topology.ts';

let runtime: LocalRuntime;
const logLines: string[] = [];

beforeAll(async () => {
  runtime = await startLocalRuntime({
    port: 0,
    log: (line) => logLines.push(line),
    // A stand-in for one handler shows that overrides reach the API; the others stay real.
    handlers: {
      putStock: (base) => async (event, context) => {
        const result = await base(event, context);
        return { ...(result as object), headers: { 'x-wrapped': 'yes' } };
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startLocalRuntime', () => {
  it('deploys the app template and returns every output the topology names', () => {
    for (const table of Object.keys(topology.tables) as TableKey[]) {
      expect(runtime.outputs[tableOutputName(table)], table).toBeTruthy();
    }
    for (const queue of Object.keys(topology.queues) as QueueKey[]) {
      expect(runtime.outputs[queueOutputName(queue)], queue).toMatch(/^https?:\/\//);
      expect(runtime.outputs[deadLetterQueueOutputName(queue)], `${queue} DLQ`).toMatch(/^https?:\/\//);
    }
    expect(runtime.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(runtime.timings.totalMs).toBeGreaterThan(0);
  });

  it('resolves each function’s environment from the outputs', () => {
    expect(runtime.env.createOrder).toMatchObject({
      ORDERS_TABLE: runtime.outputs[tableOutputName('orders')],
      OUTBOX_TABLE: runtime.outputs[tableOutputName('outbox')],
      AWS_ENDPOINT_URL: runtime.endpoint,
    });
    expect(JSON.parse(runtime.env.relay.TOPIC_QUEUES ?? '{}')).toEqual({
      'order.created': runtime.outputs[queueOutputName('orderEvents')],
    });
  });

  it('loads every topology function', () => {
    expect(Object.keys(runtime.functions).sort()).toEqual(Object.keys(topology.functions).sort());
    for (const fn of Object.values(runtime.functions)) expect(fn.initError, fn.key).toBeUndefined();
  });

  it('seeds the starting stock straight into the inventory table', async () => {
    const client = new DynamoDBClient(runtime.clientConfig);
    const { Item } = await client.send(
      new GetItemCommand({
        TableName: runtime.outputs[tableOutputName('inventory')],
        Key: { sku: { S: 'SKU-APPLE' } },
      }),
    );
    client.destroy();
    expect(Item?.available).toEqual({ N: String(DEFAULT_STOCK[0]?.available) });
  });

  it('runs one poller per event source mapping of the topology', () => {
    const mapped = (
      Object.entries(topology.functions) as [FunctionKey, (typeof topology.functions)[FunctionKey]][]
    )
      .filter(([, spec]) => spec.streamSource !== undefined || spec.queueSource !== undefined)
      .map(([key]) => key);
    expect(runtime.pollers.map((poller) => poller.functionKey)).toEqual(mapped);
  });

  it('serves the routes through the real handlers, with overrides applied', async () => {
    const put = await fetch(`${runtime.apiUrl}/inventory/SKU-TEST`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ available: 7 }),
    });
    expect(put.headers.get('x-wrapped')).toBe('yes');
    expect(put.status).toBe(200);
    const get = await fetch(`${runtime.apiUrl}/inventory/SKU-TEST`);
    expect(await get.json()).toEqual({ sku: 'SKU-TEST', available: 7 });
  });

  it('pauses the pollers and runs single cycles on demand', async () => {
    await runtime.pausePollers();
    expect(runtime.pollers.every((poller) => poller.paused)).toBe(true);
    const response = await fetch(`${runtime.apiUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'c-paused', items: [{ sku: 'SKU-BANANA', quantity: 1 }] }),
    });
    expect(response.status).toBe(201);
    const { orderId } = (await response.json()) as { orderId: string };
    const status = async (): Promise<string | undefined> => {
      const order = (await (await fetch(`${runtime.apiUrl}/orders/${orderId}`)).json()) as {
        messages?: { status: string }[];
      };
      return order.messages?.[0]?.status;
    };
    expect(await status()).toBe('PENDING');
    await runtime.drain();
    expect(await status()).toBe('CONFIRMED');
    runtime.resumePollers();
    expect(runtime.pollers.some((poller) => poller.paused)).toBe(false);
  });

  it('stops the moto it started', async () => {
    const pid = runtime.emulatorPid ?? -1;
    expect(isAlive(pid)).toBe(true);
    await runtime.stop();
    expect(isAlive(pid)).toBe(false);
  });
});
