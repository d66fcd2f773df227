import { describe, expect, it } from 'vitest';
import { OutboxErrorCode } from '../../../shared/errors.ts';
import { readReceiptBody } from '../../../shared/receipts/receipt.ts';
import {
  ReceiptConfirmer,
  ReceiptNotSentError,
  type ReceiptQueue,
} from '../../../shared/receipts/receipt-confirmer.ts';
import { testMessageId } from '../../support/factories.ts';

const NOW = new Date('2026-12-02T10:00:00.000Z');

/** A receipt queue that records each call's bodies and fails the bodies it is told to. */
class RecordingQueue implements ReceiptQueue {
  readonly calls: string[][] = [];
  failBody: ((index: number) => string | undefined) | undefined;
  throwing: Error | undefined;

  async sendBodies(bodies: readonly string[]): Promise<readonly (string | undefined)[]> {
    this.calls.push([...bodies]);
    if (this.throwing !== undefined) throw this.throwing;
    return bodies.map((_, index) => this.failBody?.(index));
  }
}

/** Timers run only when `fire` is called, so a test decides what arrives within one linger. */
function manualTimers(): { setTimer: (run: () => void) => void; fire: () => Promise<void> } {
  const pending: (() => void)[] = [];
  return {
    setTimer: (run) => pending.push(run),
    fire: async () => {
      for (const run of pending.splice(0)) run();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('ReceiptConfirmer', () => {
  it('sends the receipts of records that finish within one linger as one message, signed by the subscriber', async () => {
    const queue = new RecordingQueue();
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'inventory', queue, setTimer: timers.setTimer });

    const confirmations = [1, 2, 3].map((n) =>
      confirmer.confirm(testMessageId(n), NOW, n === 2 ? 'REJECTED_OUT_OF_STOCK' : undefined),
    );
    await timers.fire();

    await expect(Promise.all(confirmations)).resolves.toEqual([
      'RECEIPT_SENT',
      'RECEIPT_SENT',
      'RECEIPT_SENT',
    ]);
    expect(queue.calls).toHaveLength(1);
    expect(readReceiptBody(queue.calls[0]?.[0] as string).receipts).toEqual([
      {
        messageId: testMessageId(1),
        subscriber: 'inventory',
        outcome: 'APPLIED',
        appliedAt: NOW.toISOString(),
      },
      {
        messageId: testMessageId(2),
        subscriber: 'inventory',
        outcome: 'REJECTED_OUT_OF_STOCK',
        appliedAt: NOW.toISOString(),
      },
      {
        messageId: testMessageId(3),
        subscriber: 'inventory',
        outcome: 'APPLIED',
        appliedAt: NOW.toISOString(),
      },
    ]);
  });

  it('sends a receipt that arrives after a flush with the next one', async () => {
    const queue = new RecordingQueue();
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'loyalty', queue, setTimer: timers.setTimer });

    const first = confirmer.confirm(testMessageId(1), NOW, 'AWARDED');
    await timers.fire();
    const second = confirmer.confirm(testMessageId(2), NOW, 'AWARDED');
    await timers.fire();

    await expect(Promise.all([first, second])).resolves.toEqual(['RECEIPT_SENT', 'RECEIPT_SENT']);
    expect(queue.calls.map((bodies) => bodies.length)).toEqual([1, 1]);
  });

  it('puts at most 100 receipts in one body', async () => {
    const queue = new RecordingQueue();
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'inventory', queue, setTimer: timers.setTimer });

    const confirmations = Array.from({ length: 250 }, (_, n) => confirmer.confirm(testMessageId(n + 1), NOW));
    await timers.fire();
    await Promise.all(confirmations);

    expect(queue.calls).toHaveLength(1);
    expect(queue.calls[0]?.map((body) => readReceiptBody(body).receipts.length)).toEqual([100, 100, 50]);
  });

  it('fails exactly the confirmations whose body the queue did not take, saying why', async () => {
    const queue = new RecordingQueue();
    queue.failBody = (index) => (index === 1 ? 'KMS.DisabledException: the key is disabled' : undefined);
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'inventory', queue, setTimer: timers.setTimer });

    const confirmations = Array.from({ length: 150 }, (_, n) => confirmer.confirm(testMessageId(n + 1), NOW));
    const settling = Promise.allSettled(confirmations);
    await timers.fire();
    const settled = await settling;

    expect(settled.slice(0, 100).every((s) => s.status === 'fulfilled')).toBe(true);
    const failed = settled.slice(100);
    expect(failed.every((s) => s.status === 'rejected')).toBe(true);
    const reason = (failed[0] as PromiseRejectedResult).reason as ReceiptNotSentError;
    expect(reason).toBeInstanceOf(ReceiptNotSentError);
    expect(reason.code).toBe(OutboxErrorCode.RECEIPT_NOT_SENT);
    expect(reason.messageId).toBe(testMessageId(101));
    expect(reason.message).toBe(
      `the receipt of ${testMessageId(101)} was not sent to the producer's receipt queue: KMS.DisabledException: the key is disabled`,
    );
  });

  it('fails every waiting confirmation when the send throws, keeping the error as cause', async () => {
    const queue = new RecordingQueue();
    queue.throwing = new Error('socket hang up');
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'inventory', queue, setTimer: timers.setTimer });

    const confirmations = [1, 2].map((n) => confirmer.confirm(testMessageId(n), NOW));
    const settling = Promise.allSettled(confirmations);
    await timers.fire();
    const settled = await settling;

    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(((settled[0] as PromiseRejectedResult).reason as Error).cause).toBe(queue.throwing);
  });

  it('cuts a long outcome to 128 characters, and fails a receipt the producer would refuse alone', async () => {
    const queue = new RecordingQueue();
    const timers = manualTimers();
    const confirmer = new ReceiptConfirmer({ subscriber: 'inventory', queue, setTimer: timers.setTimer });

    const long = confirmer.confirm(testMessageId(1), NOW, 'X'.repeat(300));
    const empty = confirmer.confirm(testMessageId(2), NOW, '');
    const settling = Promise.allSettled([long, empty]);
    await timers.fire();
    const [sent, refused] = await settling;

    expect(sent).toEqual({ status: 'fulfilled', value: 'RECEIPT_SENT' });
    expect(readReceiptBody(queue.calls[0]?.[0] as string).receipts).toMatchObject([
      { messageId: testMessageId(1), outcome: 'X'.repeat(128) },
    ]);
    expect(refused).toMatchObject({ status: 'rejected' });
    expect(((refused as PromiseRejectedResult).reason as Error).message).toContain(
      `receipt of ${testMessageId(2)} outcome:`,
    );
  });

  it('waits 5 ms by default for receipts to share a message with', async () => {
    const queue = new RecordingQueue();
    const delays: number[] = [];
    const confirmer = new ReceiptConfirmer({
      subscriber: 'inventory',
      queue,
      setTimer: (run, ms) => {
        delays.push(ms);
        run();
      },
    });

    await confirmer.confirm(testMessageId(1), NOW);

    expect(delays).toEqual([5]);
  });
});
