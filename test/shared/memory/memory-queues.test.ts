import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryQueueError, MemoryQueues } from '../../../shared/memory/memory-queues.ts';
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
const second = envelope({
  messageId: testMessageId(2),
  headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
});

describe('MemoryQueues', () => {
  it('delivers published messages as SQS records: the envelope as body, message_id and topic as attributes', async () => {
    await queues.publishBatch(QUEUE, [first, second]);

    const records = queues.receive(QUEUE, 10);

    expect(records.map((record) => record.body)).toEqual([messageBody(first), messageBody(second)]);
    expect(records[0]?.messageAttributes.message_id?.stringValue).toBe(first.messageId);
    expect(records[0]?.messageAttributes.topic?.stringValue).toBe('order.created');
    expect(records[1]?.messageAttributes.traceparent?.stringValue).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    );
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

    await queues.deadLetter({
      queueUrl: DLQ,
      record,
      reason: 'POISON',
      lastError: 'PoisonMessageError: no envelope',
    });

    expect(queues.peek(DLQ)).toEqual([
      {
        body: ' {"not":"an envelope"} ',
        attributes: {
          message_id: first.messageId,
          topic: 'order.created',
          dead_letter_reason: 'POISON',
          last_error: 'PoisonMessageError: no envelope',
        },
        receiveCount: 0,
      },
    ]);
  });

  it('refuses a queue it does not know', async () => {
    await expect(queues.publishBatch('memory://nope', [first])).rejects.toThrow(/NonExistentQueue/);
    expect(() => queues.receive('memory://nope', 1)).toThrow(/NonExistentQueue/);
  });
});

describe('MemoryQueues as SQS', () => {
  const FIFO = 'memory://ordered.fifo';
  const DELAYED = 'memory://delayed';
  const SHORT_LIVED = 'memory://short-lived';

  beforeEach(() => {
    queues.createQueue(FIFO, { visibilityTimeoutMs: VISIBILITY_MS, fifo: true });
    queues.createQueue(DELAYED, { visibilityTimeoutMs: VISIBILITY_MS, delayMs: 5_000 });
    queues.createQueue(SHORT_LIVED, { visibilityTimeoutMs: VISIBILITY_MS, retentionMs: 60_000 });
  });

  function codeOf(action: () => unknown): string | undefined {
    try {
      action();
    } catch (error) {
      return error instanceof MemoryQueueError ? error.code : `not a queue error: ${String(error)}`;
    }
    return undefined;
  }

  it('keeps typed attributes and reports sent and first-receive times and the receive count', () => {
    const sentAt = clock.now().getTime();
    const { messageId } = queues.send(PLAIN, {
      body: 'b',
      attributes: {
        text: { dataType: 'String', stringValue: 'x' },
        count: { dataType: 'Number', stringValue: '3' },
        bytes: { dataType: 'Binary.gzip', binaryValue: new Uint8Array([1, 2]) },
      },
      systemAttributes: { AWSTraceHeader: { dataType: 'String', stringValue: 'Root=1-abc' } },
    });
    clock.advance(1_000);
    const [first] = queues.receiveMessages(PLAIN, { max: 10, visibilityTimeoutMs: 0 });
    clock.advance(1_000);
    const [second] = queues.receiveMessages(PLAIN, { max: 10 });

    expect(first).toMatchObject({
      messageId,
      body: 'b',
      receiveCount: 1,
      sentAt,
      firstReceivedAt: sentAt + 1_000,
    });
    expect(first?.attributes.bytes).toEqual({ dataType: 'Binary.gzip', binaryValue: new Uint8Array([1, 2]) });
    expect(first?.systemAttributes.AWSTraceHeader?.stringValue).toBe('Root=1-abc');
    expect(second).toMatchObject({ receiveCount: 2, sentAt, firstReceivedAt: sentAt + 1_000 });
  });

  it('holds a delayed message back, counting messages as visible, in flight and delayed', () => {
    queues.send(DELAYED, { body: 'later' });
    queues.send(DELAYED, { body: 'in flight', delayMs: 0 });
    queues.send(DELAYED, { body: 'visible', delayMs: 0 });
    queues.receiveMessages(DELAYED, { max: 1 });

    expect(queues.counts(DELAYED)).toEqual({ visible: 1, inFlight: 1, delayed: 1 });
    clock.advance(5_000);
    expect(queues.receiveMessages(DELAYED, { max: 10 }).map((message) => message.body)).toEqual([
      'later',
      'visible',
    ]);
  });

  it('drops messages older than the retention period', () => {
    queues.send(SHORT_LIVED, { body: 'old' });
    clock.advance(59_999);
    queues.send(SHORT_LIVED, { body: 'young' });
    clock.advance(1);

    expect(queues.receiveMessages(SHORT_LIVED, { max: 10 }).map((message) => message.body)).toEqual([
      'young',
    ]);
  });

  it('moves a message past maxReceiveCount to the DLQ itself: same id, receive count, and where it came from', () => {
    const { messageId } = queues.send(QUEUE, { body: 'poison' });
    const notified: string[] = [];
    queues.onMessage((url) => notified.push(url));
    for (let receive = 0; receive < 4; receive += 1)
      queues.receiveMessages(QUEUE, { max: 1, visibilityTimeoutMs: 0 });

    const [dead] = queues.receiveMessages(DLQ, { max: 1 });

    expect(dead).toMatchObject({
      messageId,
      body: 'poison',
      receiveCount: 4,
      deadLetterSourceQueueUrl: QUEUE,
    });
    expect(notified).toEqual([DLQ]);
  });

  it('delivers FIFO messages in order per group, holds a group while one of its messages is in flight, and drops duplicates for 5 minutes', () => {
    const first = queues.send(FIFO, { body: 'g1-1', groupId: 'g1', deduplicationId: 'd1' });
    queues.send(FIFO, { body: 'g1-2', groupId: 'g1', deduplicationId: 'd2' });
    queues.send(FIFO, { body: 'g2-1', groupId: 'g2', deduplicationId: 'd3' });
    const duplicate = queues.send(FIFO, { body: 'again', groupId: 'g1', deduplicationId: 'd1' });

    const [head] = queues.receiveMessages(FIFO, { max: 1 });
    const others = queues.receiveMessages(FIFO, { max: 10 });
    queues.deleteMessage(FIFO, head?.receiptHandle ?? '');
    const [next] = queues.receiveMessages(FIFO, { max: 10 });
    clock.advance(5 * 60_000);
    const resent = queues.send(FIFO, { body: 'again', groupId: 'g1', deduplicationId: 'd1' });

    expect(duplicate).toEqual(first);
    expect(first.sequenceNumber).toMatch(/^\d{20}$/);
    expect(head?.body).toBe('g1-1');
    expect(others.map((message) => message.body)).toEqual(['g2-1']);
    expect(next?.body).toBe('g1-2');
    expect(resent.messageId).not.toBe(first.messageId);
  });

  it('publishes to a FIFO queue as the SQS publisher does: order key as group, one deduplication id per delivery round', async () => {
    const ordered = envelope({ messageId: testMessageId(7), orderKey: 'order#order-1', seq: 1 });
    const roundOf = (round: number) => ({ deliveryRounds: new Map([[ordered.messageId, round]]) });

    await queues.publishBatch(FIFO, [ordered], roundOf(0));
    // A retry within the round, inside the 5-minute window: SQS drops it.
    await queues.publishBatch(FIFO, [ordered], roundOf(0));
    // A resend in the next round is a new message.
    await queues.publishBatch(FIFO, [ordered], roundOf(1));

    expect(queues.receiveMessages(FIFO, { max: 10 }).map((m) => [m.groupId, m.deduplicationId])).toEqual([
      ['order#order-1', `${ordered.messageId}-0`],
      ['order#order-1', `${ordered.messageId}-1`],
    ]);
  });

  it('refuses messages SQS refuses', () => {
    const attributes = Object.fromEntries(
      Array.from({ length: 11 }, (_, index) => [`a${index}`, { dataType: 'String', stringValue: 'v' }]),
    );

    expect(codeOf(() => queues.send(PLAIN, { body: '' }))).toBe('MissingParameter');
    expect(codeOf(() => queues.send(PLAIN, { body: 'bad \u0000' }))).toBe('InvalidMessageContents');
    expect(codeOf(() => queues.send(PLAIN, { body: 'b', attributes }))).toBe('InvalidParameterValue');
    expect(
      codeOf(() =>
        queues.send(PLAIN, { body: 'b', attributes: { a: { dataType: 'String', stringValue: '' } } }),
      ),
    ).toBe('InvalidParameterValue');
    expect(codeOf(() => queues.send(PLAIN, { body: 'x'.repeat(1024 * 1024 + 1) }))).toBe(
      'InvalidParameterValue',
    );
    expect(codeOf(() => queues.send(FIFO, { body: 'b', deduplicationId: 'd' }))).toBe('MissingParameter');
    expect(codeOf(() => queues.send(FIFO, { body: 'b', groupId: 'g' }))).toBe('InvalidParameterValue');
    expect(codeOf(() => queues.send('memory://nope', { body: 'b' }))).toBe('QueueDoesNotExist');
  });

  it('changes visibility only of a message in flight, by its latest receipt handle, within 12 hours', () => {
    queues.send(PLAIN, { body: 'b' });
    const [message] = queues.receiveMessages(PLAIN, { max: 1 });
    const handle = message?.receiptHandle ?? '';

    expect(codeOf(() => queues.changeMessageVisibility(PLAIN, handle, 12 * 3600 + 1))).toBe(
      'InvalidParameterValue',
    );
    queues.changeMessageVisibility(PLAIN, handle, 0);
    expect(codeOf(() => queues.changeMessageVisibility(PLAIN, handle, 10))).toBe('MessageNotInflight');
    const [again] = queues.receiveMessages(PLAIN, { max: 1 });
    expect(codeOf(() => queues.changeMessageVisibility(PLAIN, handle, 10))).toBe('InvalidParameterValue');
    expect(codeOf(() => queues.changeMessageVisibility(PLAIN, 'made-up', 10))).toBe('ReceiptHandleIsInvalid');
    expect(codeOf(() => queues.deleteMessage(PLAIN, 'made-up'))).toBe('ReceiptHandleIsInvalid');
    queues.deleteMessage(PLAIN, again?.receiptHandle ?? '');
    expect(queues.depth(PLAIN)).toBe(0);
  });

  it('purges and deletes queues, and keeps messages when a queue\u2019s settings change', () => {
    queues.send(PLAIN, { body: 'kept' });
    queues.createQueue(PLAIN, { visibilityTimeoutMs: 1 });
    expect(queues.settings(PLAIN).visibilityTimeoutMs).toBe(1);
    expect(queues.depth(PLAIN)).toBe(1);

    queues.purge(PLAIN);
    expect(queues.depth(PLAIN)).toBe(0);
    queues.deleteQueue(PLAIN);
    expect(queues.hasQueue(PLAIN)).toBe(false);
  });
});
