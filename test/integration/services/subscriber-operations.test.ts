/**
 * The operator's commands per subscriber (`npm run outbox`, the CLI core, against the emulator) on the three
 * services running on one backend (moto, else embedded): a delivery FAILED at one subscriber found by stats,
 * list and show, and replayed to that subscriber alone; a subscriber's dead letter redriven from its own
 * stack and applied once; a cancelled order erased, each subscriber answering its erase by receipt.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import { waitFor } from '../support.ts';
import {
  cancelOrder,
  clearFaults,
  deliveryKey,
  deliveryStates,
  LOCAL_STACKS,
  messagesOf,
  outbox,
  outboxRowsOf,
  placeOrder,
  pointsOf,
  putStock,
  receivedOf,
  type Services,
  SUBSCRIBER_OUTPUTS,
  scanTable,
  startServices,
  stockOf,
  sweepSendsOf,
  waitForConfirmed,
  waitForDelivery,
} from './support.ts';

let services: Services;
let runtime: LocalRuntime;

beforeAll(async () => {
  services = await startServices();
  runtime = services.runtime;
  await putStock(runtime, 'SKU-OPS-SVC', 50);
});

afterEach(() => {
  clearFaults(services.faults);
});

afterAll(async () => {
  await services?.stop();
});

/** `outbox <argv> --json`, its exit code checked, its document parsed. */
async function outboxJson(...argv: string[]) {
  const run = await outbox(runtime, ...argv, '--json');
  expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout);
}

describe('a delivery FAILED at one subscriber, found and replayed per subscriber', () => {
  let messageId = '';

  it('is counted by stats --subscriber, listed by list --status FAILED --subscriber, and shown beside the other delivery', async () => {
    // Loyalty's delivery only the sweeper sends (the relay never sees it), and SQS refuses it: with one
    // attempt allowed it is FAILED at once. Inventory's goes as usual.
    services.faults.hideFromRelay.add(deliveryKey('ops-failed', 'loyalty'));
    services.faults.refuseSends.add('loyalty');
    ({ messageId } = await placeOrder(runtime, {
      orderId: 'ops-failed',
      customerId: 'ops-customer-failed',
      items: [{ sku: 'SKU-OPS-SVC', quantity: 1 }],
    }));
    await waitForDelivery(runtime, { orderId: 'ops-failed', subscriber: 'inventory', status: 'CONFIRMED' });
    // Past the grace the stream has before the sweeper sends a PENDING message itself.
    const swept = await services.sweepAt(new Date(Date.now() + 61_000), { maxAttempts: { loyalty: 1 } });
    expect(swept.failed).toBe(1);
    expect(sweepSendsOf(services, messageId)).toEqual(['loyalty (refused)']);

    const loyaltyStats = await outboxJson('stats', '--subscriber', 'loyalty');
    const inventoryStats = await outboxJson('stats', '--subscriber', 'inventory');
    const failedAtLoyalty = await outboxJson('list', '--status', 'FAILED', '--subscriber', 'loyalty');
    const failedAtInventory = await outboxJson('list', '--status', 'FAILED', '--subscriber', 'inventory');
    const shown = await outboxJson('show', messageId);
    const table = await outbox(runtime, 'show', messageId);

    expect(loyaltyStats).toMatchObject({ subscriber: 'loyalty', totals: { FAILED: 1 } });
    expect(loyaltyStats.bySubscriber).toContainEqual(
      expect.objectContaining({ topic: 'order.created', subscriber: 'loyalty', FAILED: 1 }),
    );
    expect(inventoryStats).toMatchObject({ subscriber: 'inventory', totals: { FAILED: 0 } });
    expect(failedAtLoyalty.items).toEqual([
      expect.objectContaining({
        messageId,
        subscriber: 'loyalty',
        aggregateId: 'ops-failed',
        status: 'FAILED',
        lastError: 'InternalError: refused by the test',
      }),
    ]);
    expect(failedAtInventory.items).toEqual([]);
    expect(shown.message).toMatchObject({ messageId, status: 'FAILED' });
    expect(
      shown.deliveries.map((d: { subscriber: string; delivery: { status: string } }) => [
        d.subscriber,
        d.delivery.status,
      ]),
    ).toEqual([
      ['inventory', 'CONFIRMED'],
      ['loyalty', 'FAILED'],
    ]);
    expect(table.stdout).toMatch(/^inventory +CONFIRMED +1 +APPLIED /m);
    expect(table.stdout).toMatch(/^loyalty +FAILED +1 .*InternalError: refused by the test$/m);
    expect(await pointsOf(runtime, 'ops-customer-failed')).toBeUndefined();
  });

  it('replays it to that subscriber alone: loyalty is sent it and confirms it, inventory is not sent it again', async () => {
    const replay = await outbox(
      runtime,
      'replay',
      messageId,
      '--subscriber',
      'loyalty',
      '--reason',
      'queue fixed',
    );
    await services.sweepAt(new Date());
    const [message] = await waitForConfirmed(runtime, 'ops-failed');
    await services.settle();

    expect(replay).toMatchObject({ code: 0, stderr: '' });
    expect(replay.stdout).toContain(
      `replayed loyalty's delivery of ${messageId} (order.created, ops-failed): FAILED → PENDING`,
    );
    expect(deliveryStates(message)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty CONFIRMED AWARDED']);
    expect(sweepSendsOf(services, messageId)).toEqual(['loyalty (refused)', 'loyalty']);
    expect(receivedOf(services, 'inventory', messageId)).toHaveLength(1);
    expect(receivedOf(services, 'loyalty', messageId)).toHaveLength(1);
    expect(await pointsOf(runtime, 'ops-customer-failed')).toBe(10);
    const shown = await outboxJson('show', messageId);
    expect(shown.audit).toEqual([
      expect.objectContaining({
        action: 'REPLAY',
        reason: 'queue fixed',
        details: expect.objectContaining({ subscriber: 'loyalty', from: 'FAILED', to: 'PENDING' }),
      }),
    ]);
    expect((await outboxJson('stats', '--subscriber', 'loyalty')).totals.FAILED).toBe(0);
    // A delivery already CONFIRMED is never replayed: a refusal for the wrong status, exit code 4.
    expect(
      (await outbox(runtime, 'replay', messageId, '--subscriber', 'inventory', '--reason', 'again')).code,
    ).toBe(4);
  });
});

describe('a dead letter in a subscriber’s own dead-letter queue', () => {
  it('is counted on the subscriber’s stack, redriven from it back to its queue, and applied once', async () => {
    services.faults.deadLetter.add(deliveryKey('ops-dead', 'loyalty'));
    const { orderId, messageId } = await placeOrder(runtime, {
      orderId: 'ops-dead',
      customerId: 'ops-customer-dead',
      items: [{ sku: 'SKU-OPS-SVC', quantity: 2 }],
    });
    await waitForDelivery(runtime, { orderId, subscriber: 'inventory', status: 'CONFIRMED' });
    await waitFor(async () => (receivedOf(services, 'loyalty', messageId).length === 1 ? true : undefined));
    await services.settle();
    expect(deliveryStates((await messagesOf(runtime, orderId))[0])).toEqual([
      'inventory CONFIRMED APPLIED',
      'loyalty SENT',
    ]);

    const before = await outboxJson('--stack', LOCAL_STACKS.loyalty, 'stats');
    const dryRun = await outbox(runtime, '--stack', LOCAL_STACKS.loyalty, 'redrive', '--dry-run');
    const redrive = await outboxJson(
      '--stack',
      LOCAL_STACKS.loyalty,
      'redrive',
      '--reason',
      'points table back',
    );
    const [message] = await waitForConfirmed(runtime, orderId);
    await services.settle();
    const after = await outboxJson('--stack', LOCAL_STACKS.loyalty, 'stats');

    expect(before).toMatchObject({ subscriber: 'loyalty' });
    expect(before.deadLetterQueues.map((q: { messages: number }) => q.messages)).toEqual([1]);
    expect(dryRun.stdout).toMatch(new RegExp(`${messageId} +order\\.created +MAX_RECEIVES +1$`, 'm'));
    expect(redrive).toMatchObject({
      dryRun: false,
      examined: 1,
      matched: 1,
      moved: 1,
      causes: { MAX_RECEIVES: 1 },
    });
    expect(redrive.queues).toEqual([
      expect.objectContaining({
        sourceQueueUrl: expect.stringMatching(/\/OutboxOrders-Outbox-loyalty$/),
        moved: 1,
      }),
    ]);
    expect(deliveryStates(message)).toEqual(['inventory CONFIRMED APPLIED', 'loyalty CONFIRMED AWARDED']);
    expect(receivedOf(services, 'loyalty', messageId)).toHaveLength(2);
    expect(await pointsOf(runtime, 'ops-customer-dead')).toBe(20);
    expect(after.deadLetterQueues.map((q: { messages: number }) => q.messages)).toEqual([0]);
    const inbox = await scanTable(runtime, SUBSCRIBER_OUTPUTS.loyalty.inbox);
    expect(
      inbox.filter((row) => String(row.messageId).startsWith(messageId)).map((row) => row.messageId),
    ).toEqual([`${messageId}#loyalty`]);
  });
});

describe('erase of a cancelled order', () => {
  it('deletes its messages and sends each subscriber an erase, which each confirms by receipt with ERASED', async () => {
    const { orderId } = await placeOrder(runtime, {
      orderId: 'ops-erase',
      customerId: 'ops-customer-erase',
      items: [{ sku: 'SKU-OPS-SVC', quantity: 1 }],
    });
    await waitForConfirmed(runtime, orderId);
    await cancelOrder(runtime, orderId);
    await waitForConfirmed(runtime, orderId, 2);
    const stock = await stockOf(runtime, 'SKU-OPS-SVC');

    const erase = await outboxJson(
      'erase',
      '--aggregate-id',
      orderId,
      '--reason',
      'data-protection request 7',
    );
    const erases = await waitFor(async () => {
      const rows = await outboxRowsOf(runtime, orderId);
      return rows.length === 2 && rows.every((r) => r.status === 'CONFIRMED') ? rows : undefined;
    });
    await services.settle();

    expect(erase).toMatchObject({ aggregateId: orderId, messagesDeleted: 2, skippedInFlight: [] });
    expect(erase.erasesSent.map((sent: { subscriber: string }) => sent.subscriber).sort()).toEqual([
      'inventory',
      'loyalty',
    ]);
    // The order's own messages are gone; what is left is each subscriber's erase, confirmed by its receipt.
    expect(erases.map((row) => [row.subscriber, row.topic, row.status, row.outcome]).sort()).toEqual([
      ['inventory', 'outbox.erase', 'CONFIRMED', 'ERASED'],
      ['loyalty', 'outbox.erase', 'CONFIRMED', 'ERASED'],
    ]);
    for (const row of erases) {
      expect(row.history).toContainEqual(
        expect.objectContaining({ event: 'CONFIRMED', by: `receipt:${row.subscriber}`, outcome: 'ERASED' }),
      );
    }
    // No business effect: the stock and the points stay as the cancellation left them.
    expect(await stockOf(runtime, 'SKU-OPS-SVC')).toBe(stock);
    expect(await pointsOf(runtime, 'ops-customer-erase')).toBe(0);
  });
});
