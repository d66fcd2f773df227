import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { messageBody } from '../../../shared/relay/wire-format.ts';
import {
  envelope,
  type ManualClock,
  manualClock,
  sqsRecord,
  testMessageId,
} from '../../support/factories.ts';

const QUEUE = 'memory://orders';
const DLQ = 'memory://orders-dlq';
const PLAIN = 'memory://plain';
const VISIBILITY_MS = 30_000;

let clock: ManualClock;
let queues: MemoryQueues;

beforeEach(() => {
  clock = manualClock();
  queues = new MemoryQueues(
    {
      [QUEUE]: { visibilityTimeoutMs: VISIBILITY_MS, maxReceiveCount: 3, deadLetterQueueUrl: DLQ },
      [DLQ]: { visibilityTimeoutMs: VISIBILITY_MS },
      [PLAIN]: { visibilityTimeoutMs: VISIBILITY_MS },
    },
    clock.now,
  );
});

const first = envelope({ messageId: testMessageId(1) });
const second = envelope({ messageId: testMessageId(2), headers: { traceparent: '00-abc-def-01' } });

describe('MemoryQueues', () => {
  it('delivers published messages as SQS records: the envelope as body, message_id and topic as attributes', async () => {
    await queues.publishBatch(QUEUE, [first, second]);

    const records = queues.receive(QUEUE, 10);

    expect(records.map((record) => record.body)).toEqual([messageBody(first), messageBody(second)]);
    expect(records[0]?.messageAttributes.message_id?.stringValue).toBe(first.messageId);
    expect(records[0]?.messageAttributes.topic?.stringValue).toBe('order.created');
    expect(records[1]?.messageAttributes.traceparent?.stringValue).toBe('00-abc-def-01');
    expect(records[0]?.attributes.ApproximateReceiveCount).toBe('1');
    expect(records[0]?.eventSourceARN).toMatch(/:orders$/);
  });

  it('receives at most `max` messages per call', async () => {
    await queues.publishBatch(QUEUE, [first, second]);

    expect(queues.receive(QUEUE, 1)).toHaveLength(1);
    expect(queues.receive(QUEUE, 10)).toHaveLength(1);
  });

  it('hides a received message until the visibility timeout has passed on the injected clock', async () => {
    await queues.publishBatch(QUEUE, [first]);
    queues.receive(QUEUE, 10);

    expect(queues.receive(QUEUE, 10)).toEqual([]);
    clock.advance(VISIBILITY_MS - 1);
    expect(queues.receive(QUEUE, 10)).toEqual([]);
    clock.advance(1);
    expect(queues.receive(QUEUE, 10)).toHaveLength(1);
  });

  it('counts every receive in ApproximateReceiveCount', async () => {
    await queues.publishBatch(PLAIN, [first]);
    const counts: string[] = [];
    for (let receive = 0; receive < 4; receive += 1) {
      counts.push(...queues.receive(PLAIN, 10).map((record) => record.attributes.ApproximateReceiveCount));
      clock.advance(VISIBILITY_MS);
    }

    expect(counts).toEqual(['1', '2', '3', '4']);
  });

  it('moves a message to the DLQ on the receive after maxReceiveCount, body unchanged', async () => {
    await queues.publishBatch(QUEUE, [first]);
    for (let receive = 1; receive <= 3; receive += 1) {
      expect(queues.receive(QUEUE, 10), `receive ${receive}`).toHaveLength(1);
      clock.advance(VISIBILITY_MS);
    }

    expect(queues.receive(QUEUE, 10)).toEqual([]);
    expect(queues.depth(QUEUE)).toBe(0);
    expect(queues.depth(DLQ)).toBe(1);
    expect(queues.peek(DLQ)[0]?.body).toBe(messageBody(first));
    expect(queues.peek(DLQ)[0]?.attributes.message_id).toBe(first.messageId);
    expect(queues.receive(DLQ, 10)).toHaveLength(1);
  });

  it('deletes a message by its receipt handle', async () => {
    await queues.publishBatch(QUEUE, [first, second]);
    const [record] = queues.receive(QUEUE, 1);
    if (!record) throw new Error('nothing received');

    queues.delete(QUEUE, record.receiptHandle);

    expect(queues.depth(QUEUE)).toBe(1);
    clock.advance(VISIBILITY_MS);
    expect(queues.receive(QUEUE, 10).map((r) => r.body)).toEqual([messageBody(second)]);
  });

  it('ignores a stale receipt handle from an earlier receive', async () => {
    await queues.publishBatch(QUEUE, [first]);
    const [stale] = queues.receive(QUEUE, 1);
    clock.advance(VISIBILITY_MS);
    const [fresh] = queues.receive(QUEUE, 1);
    if (!stale || !fresh) throw new Error('nothing received');

    queues.delete(QUEUE, stale.receiptHandle);
    expect(queues.depth(QUEUE)).toBe(1);

    queues.delete(QUEUE, fresh.receiptHandle);
    expect(queues.depth(QUEUE)).toBe(0);
  });

  it('changes the visibility of a received message, from now on the injected clock', async () => {
    await queues.publishBatch(QUEUE, [first]);
    const [record] = queues.receive(QUEUE, 1);
    if (!record) throw new Error('nothing received');

    await queues.changeVisibility(QUEUE, record.receiptHandle, 120);
    clock.advance(VISIBILITY_MS);
    expect(queues.receive(QUEUE, 10)).toEqual([]);
    clock.advance(120_000 - VISIBILITY_MS - 1);
    expect(queues.receive(QUEUE, 10)).toEqual([]);
    clock.advance(1);
    const [again] = queues.receive(QUEUE, 10);
    expect(again?.attributes.ApproximateReceiveCount).toBe('2');

    if (!again) throw new Error('nothing received');
    await queues.changeVisibility(QUEUE, again.receiptHandle, 0);
    expect(queues.receive(QUEUE, 10)).toHaveLength(1);
  });

  it('dead-letters a record with its body and attributes, plus the reason and the last error', async () => {
    const record = sqsRecord(first, { rawBody: ' {"not":"an envelope"} ' });

    await queues.deadLetter(DLQ, record, 'POISON', 'PoisonMessageError: no envelope');

    expect(queues.peek(DLQ)).toEqual([
      {
        body: ' {"not":"an envelope"} ',
        attributes: {
          message_id: first.messageId,
          topic: 'order.created',
          dead_letter_reason: 'POISON',
          last_error: 'PoisonMessageError: no envelope',
        },
      },
    ]);
  });

  it('refuses a queue it does not know', async () => {
    await expect(queues.publishBatch('memory://nope', [first])).rejects.toThrow(/NonExistentQueue/);
    expect(() => queues.receive('memory://nope', 1)).toThrow(/NonExistentQueue/);
  });
});
