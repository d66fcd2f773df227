import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FaultInjector, seededRandom, uniformRates } from '../../../infra/dev/drill/faults.ts';
import {
  faultyReceiptClient,
  faultyReceiptQueue,
  ReceiptFaults,
  receiptsOf,
} from '../../../infra/dev/drill/receipt-faults.ts';
import { ReceiptTally } from '../../../infra/dev/drill/receipt-tally.ts';
import { testMessageId } from '../../support/factories.ts';

const RECEIPT_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/OutboxOrders-Outbox-receipts';

/** A receipt body as a subscriber's consumer sends it. */
function body(...receipts: [messageId: string, subscriber: string][]): string {
  return JSON.stringify({
    schemaVersion: 1,
    receipts: receipts.map(([messageId, subscriber]) => ({
      messageId,
      subscriber,
      outcome: 'APPLIED',
      appliedAt: '2030-01-01T00:00:00.000Z',
    })),
  });
}

/** Receipt faults where only `kind` happens, always. */
function only(kind: 'receiptLost' | 'receiptDuplicated' | 'receiptDelayed' | 'none'): ReceiptFaults {
  const rates = { ...uniformRates(0), hotSkuConflict: 0, ...(kind === 'none' ? {} : { [kind]: 1 }) };
  return new ReceiptFaults(new FaultInjector(rates, seededRandom(1)), seededRandom(2), 45_000);
}

describe('receiptsOf', () => {
  it('names the deliveries a body confirms, and none of a body it cannot read', () => {
    expect(receiptsOf(body([testMessageId(1), 'inventory'], [testMessageId(2), 'loyalty']))).toEqual([
      { messageId: testMessageId(1), subscriber: 'inventory' },
      { messageId: testMessageId(2), subscriber: 'loyalty' },
    ]);
    expect(receiptsOf('not json')).toEqual([]);
    expect(receiptsOf('{"receipts":[{"messageId":1}]}')).toEqual([]);
  });
});

describe('faultyReceiptQueue', () => {
  const sendAll = async (faults: ReceiptFaults, bodies: string[]) => {
    const sent: { body: string; delayMs: number }[] = [];
    const answers = await faultyReceiptQueue(
      (sentBody, delayMs) => sent.push({ body: sentBody, delayMs }),
      faults,
    ).sendBodies(bodies);
    return { sent, answers };
  };

  it('loses a body while answering it sent, as SQS answers a message it accepted, and counts its receipts lost', async () => {
    const faults = only('receiptLost');
    const lost = body([testMessageId(1), 'inventory'], [testMessageId(2), 'inventory']);

    const { sent, answers } = await sendAll(faults, [lost]);

    expect(sent).toEqual([]);
    expect(answers).toEqual([undefined]);
    expect(faults.facts()).toMatchObject({
      sent: 2,
      bodies: 1,
      lost: new Map([
        [`${testMessageId(1)}#inventory`, 1],
        [`${testMessageId(2)}#inventory`, 1],
      ]),
    });
    expect(faults.troubleOf(`${testMessageId(1)}#inventory`)).toBe('its receipt lost');
  });

  it('sends a duplicated body twice, a delayed one later, and a delivered one once', async () => {
    const receipt = body([testMessageId(1), 'loyalty']);

    expect((await sendAll(only('receiptDuplicated'), [receipt])).sent).toEqual([
      { body: receipt, delayMs: 0 },
      { body: receipt, delayMs: 0 },
    ]);
    const delayed = (await sendAll(only('receiptDelayed'), [receipt])).sent;
    expect(delayed).toEqual([{ body: receipt, delayMs: expect.any(Number) }]);
    expect(delayed[0]?.delayMs).toBeGreaterThanOrEqual(1_000);
    expect(delayed[0]?.delayMs).toBeLessThan(45_000);
    const delivered = only('none');
    expect((await sendAll(delivered, [receipt])).sent).toEqual([{ body: receipt, delayMs: 0 }]);
    expect(delivered.troubleOf(`${testMessageId(1)}#loyalty`)).toBeUndefined();
  });
});

describe('faultyReceiptClient', () => {
  /** An SQS client that records each SendMessageBatch and answers every entry sent. */
  function recordingClient() {
    const calls: SendMessageBatchCommand['input'][] = [];
    const client = {
      send: async (command: unknown) => {
        if (!(command instanceof SendMessageBatchCommand)) return { other: true };
        calls.push(command.input);
        return { Successful: (command.input.Entries ?? []).map(({ Id }) => ({ Id })), Failed: [] };
      },
    } as unknown as SQSClient;
    return { client, calls };
  }

  it('answers a lost entry sent without sending it, sends a duplicated one twice and a delayed one with a delay', async () => {
    const receipt = body([testMessageId(1), 'inventory']);
    const send = async (faults: ReceiptFaults) => {
      const { client, calls } = recordingClient();
      const response = await faultyReceiptClient(client, RECEIPT_QUEUE, faults).send(
        new SendMessageBatchCommand({
          QueueUrl: RECEIPT_QUEUE,
          Entries: [{ Id: '0', MessageBody: receipt }],
        }),
      );
      return { calls, response };
    };

    const lost = await send(only('receiptLost'));
    expect(lost.calls).toEqual([]);
    expect(lost.response).toMatchObject({ Successful: [{ Id: '0' }], Failed: [] });

    const duplicated = await send(only('receiptDuplicated'));
    expect(duplicated.calls[0]?.Entries?.map(({ MessageBody }) => MessageBody)).toEqual([receipt, receipt]);
    // The consumer hears of its own entry once.
    expect(duplicated.response).toMatchObject({ Successful: [{ Id: '0' }], Failed: [] });

    const delayed = await send(only('receiptDelayed'));
    expect(delayed.calls[0]?.Entries).toEqual([
      { Id: '0', MessageBody: receipt, DelaySeconds: expect.any(Number) },
    ]);
  });

  it('leaves every other call alone: another queue, another command', async () => {
    const { client, calls } = recordingClient();
    const faulty = faultyReceiptClient(client, RECEIPT_QUEUE, only('receiptLost'));

    await faulty.send(
      new SendMessageBatchCommand({
        QueueUrl: 'https://elsewhere',
        Entries: [{ Id: '0', MessageBody: 'x' }],
      }),
    );

    expect(calls).toEqual([{ QueueUrl: 'https://elsewhere', Entries: [{ Id: '0', MessageBody: 'x' }] }]);
  });
});

describe('ReceiptTally', () => {
  it('sums what each receipts function invocation found, and counts the invocations', () => {
    const tally = new ReceiptTally();
    const counts = {
      CONFIRMED: 2,
      ALREADY_CONFIRMED: 1,
      APPLIED_AFTER_CANCEL: 0,
      NOT_CONFIRMABLE: 0,
      NOT_FOUND: 0,
      ERROR: 0,
    };

    tally.add({ counts, unreadable: 0 });
    tally.add({ counts: { ...counts, ALREADY_CONFIRMED: 3, NOT_FOUND: 1 }, unreadable: 1 });

    expect(tally.invocations).toBe(2);
    expect(tally.totals()).toEqual({
      ...counts,
      CONFIRMED: 4,
      ALREADY_CONFIRMED: 4,
      NOT_FOUND: 1,
      unreadable: 1,
    });
  });
});
