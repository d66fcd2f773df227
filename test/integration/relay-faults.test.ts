import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { planStockReservation } from '../../functions/inventory/apply-order/plan-stock-reservation.ts';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { consumerParts, consumeSqsBatch } from '../../shared/lambda/consumer-handler.ts';
import { relayDeps } from '../../shared/lambda/relay-handler.ts';
import { relayStreamBatch } from '../../shared/lambda/relay-stream-batch.ts';
import { sweeperDeps } from '../../shared/lambda/sweeper-handler.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../shared/outbox/outbox-store.ts';
import type { RelayDeps } from '../../shared/relay/relay-messages.ts';
import { requireEnv } from '../../shared/settings/setting.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../shared/sweeper/sweep.ts';
import { placeOrder, scanAll, startRuntime, stockOf, waitFor, waitForMessageStatus } from './support.ts';

const quiet = { info: () => {}, warn: () => {} };

/** One sweeper round as the shipped sweeper runs it, with its clock at `at`. */
function sweepAt(at: Date): Promise<SweepReport> {
  const deps = sweeperDeps(runtime.env['Outbox/Sweeper'] ?? {});
  let rounds = 1;
  return sweep({
    ...deps,
    clock: () => at,
    owner: `test-sweeper-${at.getTime()}`,
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
  });
}

/** Faults the tests switch on: which message's markSent crashes once, and which entry SQS rejects. */
const faults = {
  crashAfterSend: new Set<string>(),
  rejectEntry: new Set<string>(),
  sends: new Map<string, number>(),
};
const consumed: string[] = [];

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime({
    handlers: {
      // No scheduled sweeper: its resends would add sends and attempts the assertions count.
      'Outbox/Sweeper': () => async () => ({}),
      'Outbox/Relay': (_base, env) => {
        const deps = relayDeps(env);
        const faulty: RelayDeps = {
          ...deps,
          publisher: {
            publishBatch: async (queueUrl, messages) => {
              const rejected = messages.filter((m) => faults.rejectEntry.has(m.aggregateId));
              const result = await deps.publisher.publishBatch(
                queueUrl,
                messages.filter((m) => !faults.rejectEntry.has(m.aggregateId)),
              );
              for (const id of result.sent) faults.sends.set(id, (faults.sends.get(id) ?? 0) + 1);
              return {
                sent: result.sent,
                failed: [
                  ...result.failed,
                  ...rejected.map((m) => ({
                    messageId: m.messageId,
                    error: 'InternalError: injected by the test',
                  })),
                ],
              };
            },
          },
          store: {
            ...deps.store,
            markSent: async (mark) => {
              const outcome = await deps.store.markSent(mark);
              // The relay dies after marking the message SENT and before it could send it.
              if (faults.crashAfterSend.delete(mark.messageId))
                throw new Error('relay crashed before its send');
              return outcome;
            },
            recordSendFailure: (...args) => deps.store.recordSendFailure(...args),
            confirm: (...args) => deps.store.confirm(...args),
          },
        };
        return (event) => relayStreamBatch(event as DynamoDBStreamEvent, faulty, quiet);
      },
      'Outbox/InventoryConsumer': (_base, env) => {
        const { plan, deps, failures } = consumerParts(env, (consumerEnv) =>
          planStockReservation(requireEnv(consumerEnv, 'INVENTORY_TABLE'), () => new Date()),
        );
        const counting = {
          info: (_message: string, data: Record<string, unknown>) => consumed.push(String(data.kind)),
          warn: () => {},
        };
        return (event, context) =>
          consumeSqsBatch(event as SQSEvent, context, { plan, deps, logger: counting, failures });
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

beforeEach(() => {
  consumed.length = 0;
});

describe('relay faults (moto)', () => {
  it('sends nothing after a crash between the SENT mark and the send; reconciliation sends it once, applied once', async () => {
    const before = await stockOf(runtime, 'SKU-APPLE');
    await runtime.pausePollers();
    const { orderId, messageId } = await placeOrder(
      runtime,
      [{ sku: 'SKU-APPLE', quantity: 4 }],
      'order-crash-1',
    );
    faults.crashAfterSend.add(messageId);
    runtime.resumePollers();

    // Marked SENT, then the relay died: nobody sent it, and the retried stream record finds it marked already.
    await waitForMessageStatus(runtime, orderId, 'SENT');
    await runtime.drain();
    expect(faults.sends.get(messageId)).toBeUndefined();
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before);

    // Past its confirmation deadline the sweeper finds it missing downstream and sends it.
    const report = await sweepAt(new Date(Date.now() + DEFAULT_CONFIRM_DEADLINE_MS + 1_000));
    expect(report).toMatchObject({ requeued: 1, sent: 1 });
    await waitForMessageStatus(runtime, orderId, 'CONFIRMED');
    await runtime.drain();

    expect(consumed.filter((kind) => kind === 'DUPLICATE')).toHaveLength(0);
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(before - 4);
    expect((await scanAll(runtime, 'inbox')).filter((row) => row.messageId === messageId)).toHaveLength(1);
  });

  it('records a rejected entry on its message without failing or blocking the rest of the batch', async () => {
    await runtime.pausePollers();
    faults.rejectEntry.add('order-batch-2');
    const placed = [];
    for (const orderId of ['order-batch-1', 'order-batch-2', 'order-batch-3']) {
      placed.push(await placeOrder(runtime, [{ sku: 'SKU-BANANA', quantity: 1 }], orderId));
    }
    runtime.resumePollers();

    await waitForMessageStatus(runtime, 'order-batch-1', 'CONFIRMED');
    await waitForMessageStatus(runtime, 'order-batch-3', 'CONFIRMED');
    const failed = await waitFor(async () => {
      const message = (await scanAll(runtime, 'outbox')).find((m) => m.aggregateId === 'order-batch-2');
      return message?.attempts === 1 ? message : undefined;
    });
    await runtime.drain();

    expect(failed).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      lastError: expect.stringContaining('InternalError'),
    });
    expect(Date.parse(String(failed.nextAttemptAt))).toBeGreaterThan(Date.parse(String(failed.createdAt)));
    // The batch did not fail: the others were sent exactly once, not retried with it.
    expect(faults.sends.get(placed[0]?.messageId ?? '')).toBe(1);
    expect(faults.sends.get(placed[2]?.messageId ?? '')).toBe(1);
    expect(faults.sends.has(placed[1]?.messageId ?? '')).toBe(false);
  });
});
