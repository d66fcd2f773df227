import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../../infra/dev/local/host/runtime.ts';

/** The example app run by the local runtime on the embedded backend, driven as the README's "Try it" does. */

let runtime: LocalRuntime;
const log: string[] = [];

beforeAll(async () => {
  runtime = await startLocalRuntime({ backend: 'embedded', port: 0, log: (line) => log.push(line) });
});

afterAll(async () => {
  await runtime?.stop();
});

async function call(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${runtime.apiUrl}${path}`, {
    method: init.method ?? 'GET',
    ...(init.body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function statusOf(orderId: string): Promise<unknown> {
  const { body } = await call(`/orders/${orderId}`);
  return (body.messages as { status: string }[] | undefined)?.[0]?.status;
}

describe('the example app on the embedded backend', () => {
  it('deploys the synthesized template and runs every function', () => {
    expect(runtime.backend).toBe('embedded');
    expect(runtime.deployment).toBe('created');
    expect(runtime.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Its transactions are atomic: no serializer stands in front of it.
    expect(runtime.endpoint).toBe(runtime.emulatorEndpoint);
    expect(runtime.stacks.map((stack) => stack.deployedName)).toEqual([
      'OutboxOrders-local',
      'OutboxInventory-local',
      'OutboxLoyalty-local',
    ]);
    expect(Object.keys(runtime.functions).sort()).toEqual(
      [
        'OutboxOrders/CancelOrder',
        'OutboxOrders/CreateOrder',
        'OutboxOrders/GetOrder',
        'OutboxOrders/Outbox/Admin',
        'OutboxOrders/Outbox/Receipts',
        'OutboxOrders/Outbox/Relay',
        'OutboxOrders/Outbox/Sweeper',
        'OutboxInventory/GetStock',
        'OutboxInventory/PutStock',
        'OutboxInventory/Inventory/Consumer',
        'OutboxLoyalty/GetPoints',
        'OutboxLoyalty/Loyalty/Consumer',
      ].sort(),
    );
    // The outbox stream, the receipt queue, and each subscriber's queue.
    expect(runtime.pollers).toHaveLength(4);
  });

  it('takes an order through PENDING → SENT → CONFIRMED at both subscribers: the stock moves and the points are awarded, once', async () => {
    expect((await call('/inventory/SKU-APPLE', { method: 'PUT', body: { available: 100 } })).status).toBe(
      200,
    );

    const created = await call('/orders', {
      method: 'POST',
      body: { customerId: 'c-1', items: [{ sku: 'SKU-APPLE', quantity: 2 }] },
    });
    const orderId = String(created.body.orderId);
    const deadline = Date.now() + 20_000;
    while ((await statusOf(orderId)) !== 'CONFIRMED' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    expect(created.status).toBe(201);
    expect(await statusOf(orderId)).toBe('CONFIRMED');
    expect((await call('/inventory/SKU-APPLE')).body).toEqual({ sku: 'SKU-APPLE', available: 98 });
    expect((await call('/loyalty/c-1')).body).toEqual({ customerId: 'c-1', points: 20 });
    await runtime.drain();
    expect((await call('/inventory/SKU-APPLE')).body).toEqual({ sku: 'SKU-APPLE', available: 98 });
    expect((await call('/loyalty/c-1')).body).toEqual({ customerId: 'c-1', points: 20 });
    const deliveries = ((await call(`/orders/${orderId}`)).body.messages as { deliveries: unknown[] }[])[0]
      ?.deliveries;
    expect(deliveries).toEqual([
      expect.objectContaining({ subscriber: 'inventory', status: 'CONFIRMED', outcome: 'APPLIED' }),
      expect.objectContaining({ subscriber: 'loyalty', status: 'CONFIRMED', outcome: 'AWARDED' }),
    ]);
  });

  it('replays a repeated order, refuses its id for a different one with 409, and answers 404 for an unknown id', async () => {
    const order = { orderId: 'order-twice', customerId: 'c-2', items: [{ sku: 'SKU-APPLE', quantity: 1 }] };

    const first = await call('/orders', { method: 'POST', body: order });
    const replay = await call('/orders', { method: 'POST', body: order });
    const different = await call('/orders', { method: 'POST', body: { ...order, customerId: 'c-3' } });

    expect([first.status, replay.status, different.status]).toEqual([201, 201, 409]);
    expect(replay.body).toEqual(first.body);
    expect((await call('/orders/no-such-order')).status).toBe(404);
  });
});
