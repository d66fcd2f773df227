import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AdminDeps } from '../../../shared/admin/admin-deps.ts';
import { InvalidAdminRequestError } from '../../../shared/admin/admin-errors.ts';
import type { AdminQueues, OutgoingQueueMessage } from '../../../shared/admin/admin-queues.ts';
import {
  canUseMoveTask,
  type RedriveInput,
  redriveDeadLetters,
} from '../../../shared/admin/redrive-dead-letters.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { envelope, sqsRecord, testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  interceptedClient,
  ORDER_DLQ,
  ORDER_QUEUE,
  PAYMENT_DLQ,
  pipeline,
} from './admin-fixture.ts';

const id = testMessageId;
const actor = 'local:ana';
const base: RedriveInput = { ratePerSecond: 10, dryRun: false, actor, reason: 'consumer fixed (INC-9)' };

let fixture: AdminFixture;

beforeEach(async () => {
  fixture = adminFixture();
  await fixture.db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 100 } }));
});

/** Dead-letters `message` as the consumer does: the body byte for byte, its attributes and the reason. */
async function deadLetter(message: Envelope, queueUrl = ORDER_DLQ): Promise<void> {
  await fixture.queues.deadLetter({
    queueUrl,
    record: sqsRecord(message),
    reason: 'MAX_RECEIVES',
    lastError: 'Error: inventory down',
  });
}

const order = (n: number, topic = 'order.created') => envelope({ messageId: id(n), topic });

/** What the source queue holds: message ids (a second copy shows twice) and attribute names. */
function sourceQueue(): { ids: string[]; attributes: string[][]; bodies: string[] } {
  const messages = fixture.queues.peek(ORDER_QUEUE);
  return {
    ids: messages.map((m) => m.attributes.message_id ?? '?'),
    attributes: messages.map((m) => Object.keys(m.attributes).sort()),
    bodies: messages.map((m) => m.body),
  };
}

const dlqIds = (queueUrl = ORDER_DLQ) => fixture.queues.peek(queueUrl).map((m) => m.attributes.message_id);

/** Journal rows of the order DLQ, by outbox message id. */
async function journal(): Promise<Record<string, unknown>> {
  const rows = await auditRows(fixture, 'redrive:order-events-dlq');
  return Object.fromEntries(
    rows.map((row) => [
      (row.details as { messageId: string }).messageId,
      (row as unknown as { state: string }).state,
    ]),
  );
}

describe('redriveDeadLetters', () => {
  it('moves every dead letter back to its source queue: same body, original attributes, journalled and audited', async () => {
    for (const n of [1, 2, 3]) await deadLetter(order(n, n === 2 ? 'order.cancelled' : 'order.created'));

    const report = await redriveDeadLetters(fixture.deps, base);

    expect(report).toMatchObject({ dryRun: false, examined: 3, matched: 3, moved: 3, resumed: 0, left: 0 });
    expect(report.queues.map((queue) => queue.deadLetterQueueUrl)).toEqual([ORDER_DLQ, PAYMENT_DLQ]);
    expect(fixture.queues.depth(ORDER_DLQ)).toBe(0);
    const source = sourceQueue();
    expect(source.ids.sort()).toEqual([1, 2, 3].map(id).sort());
    expect(source.attributes).toEqual([
      ['message_id', 'topic'],
      ['message_id', 'topic'],
      ['message_id', 'topic'],
    ]);
    expect(source.bodies.sort()).toEqual(
      [1, 2, 3].map((n) => sqsRecord(order(n, n === 2 ? 'order.cancelled' : 'order.created')).body).sort(),
    );
    expect(await journal()).toEqual({ [id(1)]: 'SENT', [id(2)]: 'SENT', [id(3)]: 'SENT' });
    expect(await auditRows(fixture, 'dlq:order-events-dlq')).toEqual([
      expect.objectContaining({
        action: 'REDRIVE',
        actor,
        reason: 'consumer fixed (INC-9)',
        details: { sourceQueue: ORDER_QUEUE, moved: 3, resumed: 0, left: 0 },
      }),
    ]);
  });

  it('moves only the chosen topic and leaves the rest in the DLQ, visible again at once', async () => {
    for (const n of [1, 2, 3, 4])
      await deadLetter(order(n, n % 2 === 0 ? 'order.cancelled' : 'order.created'));
    await deadLetter(envelope({ messageId: id(5), topic: 'payment.captured' }), PAYMENT_DLQ);

    const report = await redriveDeadLetters(fixture.deps, { ...base, topic: 'order.cancelled' });

    expect(report).toMatchObject({ examined: 4, matched: 2, moved: 2, left: 2 });
    expect(sourceQueue().ids.sort()).toEqual([id(2), id(4)].sort());
    expect(dlqIds().sort()).toEqual([id(1), id(3)].sort());
    expect(fixture.queues.counts(ORDER_DLQ)).toEqual({ visible: 2, inFlight: 0, delayed: 0 });
    // The payment DLQ is not even read.
    expect(report.queues.map((queue) => queue.deadLetterQueueUrl)).toEqual([ORDER_DLQ]);
    expect(fixture.queues.counts(PAYMENT_DLQ).visible).toBe(1);
  });

  it('moves only the chosen message ids', async () => {
    for (let n = 1; n <= 25; n += 1) await deadLetter(order(n));

    const report = await redriveDeadLetters(fixture.deps, { ...base, messageIds: [id(3), id(17), id(99)] });

    expect(report).toMatchObject({ examined: 25, matched: 2, moved: 2, left: 23 });
    expect(sourceQueue().ids.sort()).toEqual([id(3), id(17)].sort());
    expect(fixture.queues.counts(ORDER_DLQ)).toEqual({ visible: 23, inFlight: 0, delayed: 0 });
  });

  it('reports in a dry run what would move, and moves, deletes and journals nothing', async () => {
    for (let n = 1; n <= 12; n += 1) await deadLetter(order(n, n <= 4 ? 'order.cancelled' : 'order.created'));

    const report = await redriveDeadLetters(fixture.deps, {
      ...base,
      dryRun: true,
      topic: 'order.cancelled',
    });

    expect(report).toMatchObject({ dryRun: true, examined: 12, matched: 4, moved: 0, left: 8 });
    expect(report.queues[0]?.wouldMove?.map((info) => info.messageId).sort()).toEqual(
      [1, 2, 3, 4].map(id).sort(),
    );
    expect(report.queues[0]?.wouldMove?.[0]).toEqual({
      sqsMessageId: expect.any(String),
      messageId: expect.any(String),
      topic: 'order.cancelled',
      cause: 'MAX_RECEIVES',
      lastError: 'Error: inventory down',
    });
    expect(report.causes).toEqual({ MAX_RECEIVES: 4 });
    expect(fixture.queues.depth(ORDER_QUEUE)).toBe(0);
    expect(fixture.queues.counts(ORDER_DLQ)).toEqual({ visible: 12, inFlight: 0, delayed: 0 });
    expect(fixture.db.itemCount('audit')).toBe(0);
  });

  it("names a dead letter SQS's redrive policy moved (no reason of the consumer's) by its cause and receives", async () => {
    // A message whose five receives all ended unacknowledged (each invocation stopped): the sixth receive finds it
    // past maxReceiveCount and SQS moves it, attributes untouched, receive count kept.
    fixture.queues.send(ORDER_QUEUE, {
      body: sqsRecord(order(7)).body,
      attributes: { message_id: { dataType: 'String', stringValue: id(7) } },
    });
    for (let receive = 1; receive <= 5; receive += 1) {
      expect(fixture.queues.receiveMessages(ORDER_QUEUE, { max: 10, visibilityTimeoutMs: 0 })).toHaveLength(
        1,
      );
    }
    expect(fixture.queues.receiveMessages(ORDER_QUEUE, { max: 10 })).toEqual([]);
    await deadLetter(order(8));

    const report = await redriveDeadLetters(fixture.deps, { ...base, dryRun: true });

    const byId = new Map(report.queues[0]?.wouldMove?.map((info) => [info.messageId, info]));
    // Five receives in the source queue and this one: more than maxReceiveCount (5), as only SQS moves them.
    expect(byId.get(id(7))).toEqual({
      sqsMessageId: expect.any(String),
      messageId: id(7),
      topic: 'order.created',
      cause: 'REDRIVE_POLICY',
      receives: 6,
    });
    expect(byId.get(id(8))).toMatchObject({ cause: 'MAX_RECEIVES', lastError: 'Error: inventory down' });
    expect(report.causes).toEqual({ REDRIVE_POLICY: 1, MAX_RECEIVES: 1 });
  });

  it('keeps to the rate and to the most messages asked for', async () => {
    for (let n = 1; n <= 5; n += 1) await deadLetter(order(n));

    const report = await redriveDeadLetters(fixture.deps, { ...base, ratePerSecond: 2, maxMessages: 3 });

    expect(report).toMatchObject({ moved: 3, matched: 3 });
    expect(fixture.sleeps).toEqual([500, 500]);
    expect(fixture.queues.counts(ORDER_DLQ)).toEqual({ visible: 2, inFlight: 0, delayed: 0 });
  });

  it('moves back a message that SQS dead-lettered itself after its receives ran out', async () => {
    await fixture.queues.publishBatch(ORDER_QUEUE, [order(1)]);
    for (let receive = 0; receive < 6; receive += 1) {
      fixture.queues.receive(ORDER_QUEUE, 10);
      fixture.clock.advance(31_000);
    }
    expect(dlqIds()).toEqual([id(1)]);

    await redriveDeadLetters(fixture.deps, { ...base, topic: 'order.created' });

    expect(sourceQueue().ids).toEqual([id(1)]);
    expect(fixture.queues.depth(ORDER_DLQ)).toBe(0);
  });

  describe('interrupted and resumed', () => {
    /** The deps with one queue operation failing once, on the `k`-th call. */
    function crashing(operation: 'send' | 'delete', k: number): AdminDeps {
      const queues = fixture.deps.queues;
      let calls = 0;
      const crash: AdminQueues = {
        receive: (...args) => queues.receive(...args),
        send: async (...args) => {
          if (operation === 'send' && ++calls === k) throw new Error('Lambda timed out before the send');
          await queues.send(...args);
        },
        delete: async (...args) => {
          if (operation === 'delete' && ++calls === k) throw new Error('Lambda timed out after the send');
          await queues.delete(...args);
        },
        changeVisibility: (...args) => queues.changeVisibility(...args),
        depth: (...args) => queues.depth(...args),
      };
      return { ...fixture.deps, queues: crash };
    }

    it.each([
      { operation: 'delete' as const, k: 3, crash: 'after the send of message 3 (before its delete)' },
      { operation: 'send' as const, k: 3, crash: 'before the send of message 3' },
      { operation: 'delete' as const, k: 1, crash: 'after the first send' },
    ])('loses and duplicates nothing when it crashes $crash', async ({ operation, k }) => {
      for (let n = 1; n <= 6; n += 1) await deadLetter(order(n));

      await expect(redriveDeadLetters(crashing(operation, k), base)).rejects.toThrow(/Lambda timed out/);
      // A crashed run holds its messages until their visibility timeout ends.
      fixture.clock.advance(301_000);
      const resumed = await redriveDeadLetters(fixture.deps, base);

      expect(sourceQueue().ids.sort()).toEqual([1, 2, 3, 4, 5, 6].map(id).sort());
      expect(fixture.queues.depth(ORDER_DLQ)).toBe(0);
      expect(resumed.resumed).toBe(operation === 'delete' ? 1 : 0);
      expect(Object.values(await journal())).toEqual(Array(6).fill('SENT'));
    });

    it.each([
      { operation: 'delete' as const, k: 2 },
      { operation: 'send' as const, k: 2 },
    ])(
      'releases the whole batch it received when it crashes ($operation $k), so a run started at once finds every message',
      async ({ operation, k }) => {
        for (let n = 1; n <= 6; n += 1) await deadLetter(order(n));

        await expect(redriveDeadLetters(crashing(operation, k), base)).rejects.toThrow(/Lambda timed out/);
        // No clock advance: nothing the crashed run received may stay hidden.
        const resumed = await redriveDeadLetters(fixture.deps, base);

        expect(sourceQueue().ids.sort()).toEqual([1, 2, 3, 4, 5, 6].map(id).sort());
        expect(fixture.queues.depth(ORDER_DLQ)).toBe(0);
        expect(resumed.moved + resumed.resumed).toBe(5);
      },
    );

    it('sends a message twice only when it crashes between its send and its journal write, and the inbox applies it once', async () => {
      for (let n = 1; n <= 3; n += 1) await deadLetter(order(n));
      let journalWrites = 0;
      const crashing = interceptedClient(fixture, (command) => {
        if (
          command instanceof UpdateCommand &&
          command.input.TableName === 'audit' &&
          ++journalWrites === 2
        ) {
          throw new Error('Lambda timed out between the send and the journal');
        }
      });

      await expect(
        redriveDeadLetters(dynamoAdminDeps({ ...fixture.options, client: crashing }), base),
      ).rejects.toThrow(/between/);
      fixture.clock.advance(301_000);
      await redriveDeadLetters(fixture.deps, base);

      const ids = sourceQueue().ids;
      expect(ids).toHaveLength(4);
      expect(new Set(ids)).toEqual(new Set([1, 2, 3].map(id)));
      const results = await pipeline(fixture).deliverAll();
      expect(results.map((result) => result.kind).sort()).toEqual([
        'APPLIED',
        'APPLIED',
        'APPLIED',
        'DUPLICATE',
      ]);
      const stock = await fixture.db.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
      expect((stock.Item as { available: number }).available).toBe(100 - 3 * 2);
    });
  });

  it('keeps a FIFO message in its group and deduplicates a resend on the DLQ message id', async () => {
    const sent: { queueUrl: string; message: OutgoingQueueMessage }[] = [];
    let received = false;
    const queues: AdminQueues = {
      receive: async () => {
        if (received) return [];
        received = true;
        return [
          {
            sqsMessageId: 'dlq-message-1',
            receiptHandle: 'r-1',
            body: '{}',
            groupId: 'order-1',
            attributes: {
              message_id: { dataType: 'String', stringValue: id(1) },
              dead_letter_reason: { dataType: 'String', stringValue: 'MAX_RECEIVES' },
            },
          },
        ];
      },
      send: async (queueUrl, message) => {
        sent.push({ queueUrl, message });
      },
      delete: async () => {},
      changeVisibility: async () => {},
      depth: async () => ({ visible: 0, inFlight: 0 }),
    };
    const fifo = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo';

    await redriveDeadLetters(
      {
        ...fixture.deps,
        queues,
        topicQueues: { 'order.created': fifo },
        deadLetterQueues: { 'order.created': `${fifo.slice(0, -5)}-dlq.fifo` },
      },
      base,
    );

    expect(sent).toEqual([
      {
        queueUrl: fifo,
        message: {
          body: '{}',
          attributes: { message_id: { dataType: 'String', stringValue: id(1) } },
          groupId: 'order-1',
          deduplicationId: 'dlq-message-1',
        },
      },
    ]);
  });

  it.each([
    { selection: { queue: 'order-events-dlq' }, moved: 1 },
    { selection: { queue: ORDER_QUEUE }, moved: 1 },
    { selection: { queue: PAYMENT_DLQ }, moved: 0 },
  ])('works on the DLQ that $selection.queue names', async ({ selection, moved }) => {
    await deadLetter(order(1));

    expect((await redriveDeadLetters(fixture.deps, { ...base, ...selection })).moved).toBe(moved);
  });

  it.each([
    { input: { queue: 'no-such-queue' }, field: 'queue' },
    { input: { topic: 'order.shipped' }, field: 'topic' },
    { input: { topic: 'payment.captured', queue: 'order-events-dlq' }, field: 'topic' },
    { input: { messageIds: [] }, field: 'messageIds' },
    { input: { ratePerSecond: -1 }, field: 'ratePerSecond' },
    { input: { maxMessages: 0 }, field: 'maxMessages' },
    { input: { actor: '' }, field: 'actor' },
  ])('refuses a bad $field with a 400 before receiving anything', async ({ input, field }) => {
    await deadLetter(order(1));

    const error = await redriveDeadLetters(fixture.deps, { ...base, ...input }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvalidAdminRequestError);
    expect((error as InvalidAdminRequestError).field).toBe(field);
    expect(fixture.queues.counts(ORDER_DLQ).visible).toBe(1);
  });
});

describe('canUseMoveTask', () => {
  it.each([
    { input: { dryRun: false }, expected: true },
    { input: { dryRun: true }, expected: false },
    { input: { dryRun: false, topic: 'order.created' }, expected: false },
    { input: { dryRun: false, messageIds: [id(1)] }, expected: false },
    { input: { dryRun: false, maxMessages: 10 }, expected: false },
  ])(
    'is $expected for $input: a move task moves a whole DLQ, with no filter, limit or dry run',
    ({ input, expected }) => {
      expect(canUseMoveTask(input)).toBe(expected);
    },
  );
});
