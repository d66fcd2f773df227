import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import type { OutboxItem } from '../../shared/outbox/outbox-item.ts';
import { toEnvelope } from '../../shared/relay/relay-messages.ts';
import { messageAttributes, messageBody } from '../../shared/relay/wire-format.ts';
import {
  outboxStreamRecords,
  outputOf,
  placeOrder,
  QueueOutput,
  request,
  scanAll,
  sqsClient,
  startRuntime,
  stockOf,
  waitFor,
  waitForMessageStatus,
} from './support.ts';

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime();
});

afterAll(async () => {
  await runtime?.stop();
});

describe('an order through the whole pipeline (moto)', () => {
  it('confirms the order.created message and reduces stock by exactly the ordered quantity', async () => {
    const before = await stockOf(runtime, 'SKU-APPLE');
    const { orderId, messageId } = await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 3 }]);

    const order = await waitForMessageStatus(runtime, orderId, 'CONFIRMED');

    expect(order.messages).toEqual([
      expect.objectContaining({
        messageId,
        topic: 'order.created',
        status: 'CONFIRMED',
        attempts: 1,
        outcome: 'APPLIED',
      }),
    ]);
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before - 3);
    const inbox = await scanAll(runtime, 'inbox');
    expect(inbox.filter((row) => row.messageId === messageId)).toEqual([
      expect.objectContaining({ outcome: 'APPLIED' }),
    ]);
  });

  it('records an out-of-stock order as a rejection, decrements nothing, and still confirms the message', async () => {
    const cherries = await stockOf(runtime, 'SKU-CHERRY');
    const { orderId, messageId } = await placeOrder(runtime, [
      { sku: 'SKU-CHERRY', quantity: 1 },
      { sku: 'SKU-EMPTY', quantity: 1 },
    ]);

    const order = await waitForMessageStatus(runtime, orderId, 'CONFIRMED');

    // The producer shows what the consumer did with its message.
    expect(order.messages[0].outcome).toBe('REJECTED_OUT_OF_STOCK');
    expect(await stockOf(runtime, 'SKU-CHERRY')).toBe(cherries);
    expect(await stockOf(runtime, 'SKU-EMPTY')).toBe(0);
    const inbox = await scanAll(runtime, 'inbox');
    expect(inbox.find((row) => row.messageId === messageId)?.outcome).toBe('REJECTED_OUT_OF_STOCK');
  });
});

describe('atomicity of the transactional write', () => {
  it('writes no order, no outbox message and no stream record when the transaction fails (duplicate order id)', async () => {
    const first = await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], 'order-atomic-1');
    await waitForMessageStatus(runtime, first.orderId, 'CONFIRMED');

    const second = await request(runtime, 'POST /orders', {
      orderId: 'order-atomic-1',
      customerId: 'someone-else',
      items: [{ sku: 'SKU-BANANA', quantity: 7 }],
    });

    expect(second.status).toBe(409);
    // The answer names what differs from the order already created under this id.
    expect(second.body.details).toEqual([
      expect.objectContaining({ field: 'customerId' }),
      expect.objectContaining({ field: 'items[0].quantity' }),
    ]);
    const orders = (await scanAll(runtime, 'orders')).filter((order) => order.orderId === 'order-atomic-1');
    expect(orders).toEqual([expect.objectContaining({ customerId: 'customer-1' })]);
    const messages = (await scanAll(runtime, 'outbox')).filter((m) => m.aggregateId === 'order-atomic-1');
    expect(messages.map((m) => m.messageId)).toEqual([first.messageId]);
    const inserts = (await outboxStreamRecords(runtime)).filter(
      (record) => record.eventName === 'INSERT' && record.newImage?.aggregateId === 'order-atomic-1',
    );
    expect(inserts.map((record) => record.newImage?.messageId)).toEqual([first.messageId]);
  });
});

describe('duplicate delivery', () => {
  it('changes stock once and keeps one inbox row when the same message is delivered three times', async () => {
    await runtime.pausePollers();
    try {
      const before = await stockOf(runtime, 'SKU-DATE');
      const { orderId, messageId } = await placeOrder(runtime, [{ sku: 'SKU-DATE', quantity: 2 }]);
      const item = (await scanAll(runtime, 'outbox')).find(
        (m) => m.messageId === messageId,
      ) as unknown as OutboxItem;
      // The same message, twice more, as SQS may deliver it (or a resend after a crash would).
      const queueUrl = outputOf(runtime, QueueOutput.orderEvents);
      for (let copy = 0; copy < 2; copy += 1) {
        await sqsClient(runtime).send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: messageBody(toEnvelope(item)),
            MessageAttributes: messageAttributes(toEnvelope(item)),
          }),
        );
      }
      runtime.resumePollers();
      await waitForMessageStatus(runtime, orderId, 'CONFIRMED');
      await runtime.drain();

      expect(await stockOf(runtime, 'SKU-DATE')).toBe(before - 2);
      const rows = (await scanAll(runtime, 'inbox')).filter((row) => row.messageId === messageId);
      expect(rows).toHaveLength(1);
    } finally {
      runtime.resumePollers();
    }
  });
});

describe('bad input', () => {
  const cases: [string, string, string][] = [
    ['malformed JSON', '{"customerId": "c-1", "items": [', '(body)'],
    ['missing customerId', JSON.stringify({ items: [{ sku: 'SKU-APPLE', quantity: 1 }] }), 'customerId'],
    ['missing items', JSON.stringify({ customerId: 'c-1' }), 'items'],
    ['items of the wrong type', JSON.stringify({ customerId: 'c-1', items: 'SKU-APPLE' }), 'items'],
    [
      'quantity as a string',
      JSON.stringify({ customerId: 'c-1', items: [{ sku: 'SKU-APPLE', quantity: '2' }] }),
      'items[0].quantity',
    ],
    [
      'negative quantity',
      JSON.stringify({ customerId: 'c-1', items: [{ sku: 'SKU-APPLE', quantity: -1 }] }),
      'items[0].quantity',
    ],
    [
      'unknown field',
      JSON.stringify({ customerId: 'c-1', coupon: 'FREE', items: [{ sku: 'SKU-APPLE', quantity: 1 }] }),
      '(body)',
    ],
    [
      'oversized body',
      JSON.stringify({ customerId: 'x'.repeat(20_000), items: [{ sku: 'SKU-APPLE', quantity: 1 }] }),
      '(body)',
    ],
  ];

  it.each(cases)('answers 400 naming the problem for %s, and writes nothing', async (_name, body, field) => {
    const ordersBefore = (await scanAll(runtime, 'orders')).length;
    const outboxBefore = (await scanAll(runtime, 'outbox')).length;

    const response = await request(runtime, 'POST /orders', body);

    expect(response.status).toBe(400);
    expect(response.body.error).toEqual(expect.any(String));
    expect(response.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect((await scanAll(runtime, 'orders')).length).toBe(ordersBefore);
    expect((await scanAll(runtime, 'outbox')).length).toBe(outboxBefore);
  });

  /** A raw POST /orders: bytes and headers exactly as given. */
  async function rawPost(body: Uint8Array | string, headers: Record<string, string>) {
    const response = await fetch(`${runtime.apiUrl}/orders`, { method: 'POST', headers, body });
    return { status: response.status, body: (await response.json()) as { error: string } };
  }

  it.each([
    ['no content type', {}, 415],
    ['text/plain', { 'content-type': 'text/plain' }, 415],
    ['application/json; charset=latin1', { 'content-type': 'application/json; charset=latin1' }, 415],
  ])('answers %s with %i, and writes nothing', async (_name, headers, status) => {
    const outboxBefore = (await scanAll(runtime, 'outbox')).length;
    const body = JSON.stringify({ customerId: 'c-1', items: [{ sku: 'SKU-APPLE', quantity: 1 }] });

    expect((await rawPost(body, headers)).status).toBe(status);
    expect((await scanAll(runtime, 'outbox')).length).toBe(outboxBefore);
  });

  it.each([
    [
      'a body that is not valid UTF-8',
      Buffer.from('{"customerId":"c-\xff","items":[{"sku":"SKU-APPLE","quantity":1}]}', 'latin1'),
    ],
    ['duplicate keys', '{"customerId":"c-1","items":[{"sku":"SKU-APPLE","quantity":5000,"quantity":1}]}'],
    ['a lone surrogate', '{"customerId":"\\ud800","items":[{"sku":"SKU-APPLE","quantity":1}]}'],
  ])('answers %s with 400 through the local API, and writes nothing', async (_name, body) => {
    const outboxBefore = (await scanAll(runtime, 'outbox')).length;

    const response = await rawPost(body, { 'content-type': 'application/json' });

    expect(response.status).toBe(400);
    expect((await scanAll(runtime, 'outbox')).length).toBe(outboxBefore);
  });

  it('serves a request whose query parameters and headers are named __proto__, constructor or toString', async () => {
    const response = await fetch(
      `${runtime.apiUrl}/inventory/SKU-APPLE?__proto__=1&constructor=2&toString=3`,
      {
        headers: { constructor: 'x', toString: 'y' },
      },
    );

    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ sku: 'SKU-APPLE' });
  });

  it('answers a retried POST with the same orderId with the original 201, and writes the order once', async () => {
    const body = {
      orderId: 'retried-order-1',
      customerId: 'c-1',
      items: [{ sku: 'SKU-BANANA', quantity: 1 }],
    };

    const first = await request(runtime, 'POST /orders', body);
    const retry = await request(runtime, 'POST /orders', body);
    const other = await request(runtime, 'POST /orders', { ...body, customerId: 'c-2' });

    expect(first.status).toBe(201);
    expect(retry).toEqual(first);
    expect(other.status).toBe(409);
    const orders = (await scanAll(runtime, 'orders')).filter((order) => order.orderId === 'retried-order-1');
    expect(orders).toHaveLength(1);
    const messages = (await scanAll(runtime, 'outbox')).filter((m) => m.aggregateId === 'retried-order-1');
    expect(messages).toHaveLength(1);
  });

  it('answers 404 for an unknown order and an unknown SKU', async () => {
    expect((await request(runtime, 'GET /orders/no-such-order')).status).toBe(404);
    expect((await request(runtime, 'GET /inventory/NO-SUCH-SKU')).status).toBe(404);
  });

  it('sets stock with PUT and rejects a negative level without writing', async () => {
    expect((await request(runtime, 'PUT /inventory/SKU-NEW', { available: 5 })).status).toBe(200);
    const bad = await request(runtime, 'PUT /inventory/SKU-NEW', { available: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([expect.objectContaining({ field: 'available' })]);
    await waitFor(async () => ((await stockOf(runtime, 'SKU-NEW')) === 5 ? true : undefined));
  });
});
