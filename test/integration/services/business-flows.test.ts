/**
 * The example as three services on one backend (moto, else embedded): the order service writes each order and
 * its message in one transaction, its outbox delivers the message to the inventory and the loyalty services —
 * each in a stack of its own, with its own tables — and each confirms its delivery by a receipt. What a user
 * relies on: the stock moves and the points are awarded once per order, taken back once per cancellation, a
 * bad request writes nothing, and the order's page tells what each service did.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import { request, sqsClient, waitFor } from '../support.ts';
import {
  cancelOrder,
  deliveryStates,
  messagesOf,
  orderPage,
  placeOrder,
  pointsOf,
  putStock,
  receivedOf,
  type Services,
  SUBSCRIBER_OUTPUTS,
  SUBSCRIBERS,
  scanTable,
  startServices,
  stockOf,
  waitForConfirmed,
  waitForDelivery,
} from './support.ts';

let services: Services;
let runtime: LocalRuntime;

beforeAll(async () => {
  services = await startServices();
  runtime = services.runtime;
  for (const sku of ['SKU-SVC-PEAR', 'SKU-SVC-PLUM', 'SKU-SVC-FIG', 'SKU-SVC-KIWI']) {
    await putStock(runtime, sku, 20);
  }
  await putStock(runtime, 'SKU-SVC-NONE', 0);
});

afterAll(async () => {
  await services?.stop();
});

describe('an order across the order, inventory and loyalty services', () => {
  it('reserves the stock, awards 10 points per unit, and shows both deliveries CONFIRMED by receipt', async () => {
    const { orderId, messageId } = await placeOrder(runtime, {
      orderId: 'svc-order-1',
      customerId: 'svc-customer-1',
      items: [
        { sku: 'SKU-SVC-PEAR', quantity: 3 },
        { sku: 'SKU-SVC-PLUM', quantity: 1 },
      ],
    });

    const [message] = await waitForConfirmed(runtime, orderId);

    expect(message).toMatchObject({ messageId, topic: 'order.created', status: 'CONFIRMED' });
    expect(message?.deliveries).toEqual([
      expect.objectContaining({
        subscriber: 'inventory',
        status: 'CONFIRMED',
        outcome: 'APPLIED',
        attempts: 1,
      }),
      expect.objectContaining({
        subscriber: 'loyalty',
        status: 'CONFIRMED',
        outcome: 'AWARDED',
        attempts: 1,
      }),
    ]);
    expect(await stockOf(runtime, 'SKU-SVC-PEAR')).toBe(17);
    expect(await stockOf(runtime, 'SKU-SVC-PLUM')).toBe(19);
    expect(await pointsOf(runtime, 'svc-customer-1')).toBe(40);
  });

  it('shows the message CONFIRMED only once both deliveries are: with loyalty stopped, inventory’s alone leaves it SENT', async () => {
    await services.pause('loyalty');
    try {
      const { orderId } = await placeOrder(runtime, {
        orderId: 'svc-order-half',
        customerId: 'svc-customer-half',
        items: [{ sku: 'SKU-SVC-FIG', quantity: 2 }],
      });
      await waitForDelivery(runtime, { orderId, subscriber: 'inventory', status: 'CONFIRMED' });
      await services.settle();
      const [half] = await messagesOf(runtime, orderId);

      expect(half?.status).toBe('SENT');
      expect(deliveryStates(half)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty SENT']);
      expect(await pointsOf(runtime, 'svc-customer-half')).toBeUndefined();
    } finally {
      services.resume('loyalty');
    }
    const [message] = await waitForConfirmed(runtime, 'svc-order-half');
    expect(deliveryStates(message)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty CONFIRMED AWARDED']);
    expect(await pointsOf(runtime, 'svc-customer-half')).toBe(20);
    expect(await stockOf(runtime, 'SKU-SVC-FIG')).toBe(18);
  });

  it('releases the stock and revokes the points when the order is cancelled, each once', async () => {
    const { orderId } = await placeOrder(runtime, {
      orderId: 'svc-order-cancel',
      customerId: 'svc-customer-cancel',
      items: [{ sku: 'SKU-SVC-KIWI', quantity: 5 }],
    });
    await waitForConfirmed(runtime, orderId);
    expect(await stockOf(runtime, 'SKU-SVC-KIWI')).toBe(15);
    expect(await pointsOf(runtime, 'svc-customer-cancel')).toBe(50);

    const cancelId = await cancelOrder(runtime, orderId);
    const [created, cancelled] = await waitForConfirmed(runtime, orderId, 2);
    await services.settle();

    expect(created?.topic).toBe('order.created');
    expect(cancelled).toMatchObject({ messageId: cancelId, topic: 'order.cancelled' });
    expect(deliveryStates(cancelled)).toEqual(['inventory CONFIRMED RELEASED', 'loyalty CONFIRMED REVOKED']);
    expect(await stockOf(runtime, 'SKU-SVC-KIWI')).toBe(20);
    expect(await pointsOf(runtime, 'svc-customer-cancel')).toBe(0);
    expect((await orderPage(runtime, orderId)).status).toBe('CANCELLED');
  });

  it('rejects an out-of-stock order at inventory while loyalty still awards; its cancel releases nothing and revokes', async () => {
    const { orderId } = await placeOrder(runtime, {
      orderId: 'svc-order-empty',
      customerId: 'svc-customer-empty',
      items: [
        { sku: 'SKU-SVC-PEAR', quantity: 1 },
        { sku: 'SKU-SVC-NONE', quantity: 1 },
      ],
    });
    const pears = await stockOf(runtime, 'SKU-SVC-PEAR');

    const [created] = await waitForConfirmed(runtime, orderId);

    expect(deliveryStates(created)).toEqual([
      'inventory CONFIRMED REJECTED_OUT_OF_STOCK',
      'loyalty CONFIRMED AWARDED',
    ]);
    // Nothing of the order was reserved: not even the line that was in stock.
    expect(await stockOf(runtime, 'SKU-SVC-PEAR')).toBe(pears);
    expect(await stockOf(runtime, 'SKU-SVC-NONE')).toBe(0);
    expect(await pointsOf(runtime, 'svc-customer-empty')).toBe(20);

    await cancelOrder(runtime, orderId);
    const [, cancelled] = await waitForConfirmed(runtime, orderId, 2);

    expect(deliveryStates(cancelled)).toEqual([
      'inventory CONFIRMED NOTHING_TO_RELEASE',
      'loyalty CONFIRMED REVOKED',
    ]);
    expect(await stockOf(runtime, 'SKU-SVC-PEAR')).toBe(pears);
    expect(await pointsOf(runtime, 'svc-customer-empty')).toBe(0);
  });

  it('applies a message delivered again to each subscriber once: the stock and the points move once, one inbox row each', async () => {
    const { orderId, messageId } = await placeOrder(runtime, {
      orderId: 'svc-order-twice',
      customerId: 'svc-customer-twice',
      items: [{ sku: 'SKU-SVC-PLUM', quantity: 4 }],
    });
    await waitForConfirmed(runtime, orderId);
    const plums = await stockOf(runtime, 'SKU-SVC-PLUM');
    expect(await pointsOf(runtime, 'svc-customer-twice')).toBe(40);

    // The same body and attributes to each subscriber's queue, twice more, as SQS may deliver a message
    // again.
    const sqs = sqsClient(runtime);
    for (const subscriber of SUBSCRIBERS) {
      const [first] = receivedOf(services, subscriber, messageId);
      if (first === undefined) throw new Error(`${subscriber} never received ${messageId}`);
      for (let copy = 0; copy < 2; copy += 1) {
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: services.queueUrl(subscriber),
            MessageBody: first.record.body,
            MessageAttributes: Object.fromEntries(
              Object.entries(first.record.messageAttributes).map(([name, value]) => [
                name,
                { DataType: value.dataType, StringValue: value.stringValue },
              ]),
            ),
          }),
        );
      }
    }
    sqs.destroy();
    await waitFor(async () =>
      SUBSCRIBERS.every((subscriber) => receivedOf(services, subscriber, messageId).length === 3)
        ? true
        : undefined,
    );
    await services.settle();

    expect(await stockOf(runtime, 'SKU-SVC-PLUM')).toBe(plums);
    expect(await pointsOf(runtime, 'svc-customer-twice')).toBe(40);
    for (const subscriber of SUBSCRIBERS) {
      const inbox = await scanTable(runtime, SUBSCRIBER_OUTPUTS[subscriber].inbox);
      expect(
        inbox.filter((row) => String(row.messageId).startsWith(messageId)).map((row) => row.messageId),
        subscriber,
      ).toEqual([`${messageId}#${subscriber}`]);
    }
    const [message] = await messagesOf(runtime, orderId);
    expect(deliveryStates(message)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty CONFIRMED AWARDED']);
  });

  it('answers 404 for a customer the loyalty service never saw', async () => {
    const response = await request(runtime, 'GET /loyalty/svc-never-seen');

    expect(response.status).toBe(404);
  });

  it.each([
    ['malformed JSON', '{"customerId": "svc-bad", "items": ['],
    ['no items', { customerId: 'svc-bad', items: [] }],
    ['a quantity of 0', { customerId: 'svc-bad', items: [{ sku: 'SKU-SVC-PEAR', quantity: 0 }] }],
    [
      'an unknown field',
      { customerId: 'svc-bad', coupon: 'FREE', items: [{ sku: 'SKU-SVC-PEAR', quantity: 1 }] },
    ],
  ])(
    'answers %s with 400, and writes nothing: no order, no outbox row, no stock moved, no points',
    async (_name, body) => {
      const counts = async () =>
        Promise.all(
          ['ordersTableName', 'outboxTableName', 'loyaltyTableName', 'inventoryInboxTableName'].map(
            async (table) => (await scanTable(runtime, table)).length,
          ),
        );
      const before = await counts();
      const pears = await stockOf(runtime, 'SKU-SVC-PEAR');

      const response = await request(runtime, 'POST /orders', body);
      await services.settle();

      expect(response.status).toBe(400);
      expect(response.body.error).toEqual(expect.any(String));
      expect(await counts()).toEqual(before);
      expect(await stockOf(runtime, 'SKU-SVC-PEAR')).toBe(pears);
      expect(await pointsOf(runtime, 'svc-bad')).toBeUndefined();
    },
  );
});
