import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { UnreadableNumber } from '../../../shared/message/dynamo-numbers.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { deliveryRoundOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import type { OutboxStore } from '../../../shared/outbox/outbox-store.ts';
import type {
  MessagePublisher,
  PublishOptions,
  PublishResult,
} from '../../../shared/relay/message-publisher.ts';
import {
  type RelayDeps,
  type RelayInput,
  relayMessages,
  toEnvelope,
} from '../../../shared/relay/relay-messages.ts';
import { messageBody } from '../../../shared/relay/wire-format.ts';
import type { RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import {
  FIXED_NOW,
  MEMORY_TABLE_SCHEMAS,
  manualClock,
  outboxItem,
  testMessageId,
} from '../../support/factories.ts';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const POLICY: RetryPolicy = { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 60_000, maxAttempts: 3 };

function inputs(
  count: number,
  overrides: Partial<OutboxItem> = {},
): (RelayInput & { readonly message: OutboxItem })[] {
  return Array.from({ length: count }, (_, i) => ({
    recordId: `seq-${i + 1}`,
    message: outboxItem({ messageId: testMessageId(i + 1), ...overrides }),
  }));
}

/** A publisher that accepts everything, unless told which message ids SQS rejects. */
function acceptingPublisher(rejected: ReadonlySet<string> = new Set()) {
  return {
    publishBatch: vi.fn(
      async (
        _queueUrl: string,
        messages: readonly Envelope[],
        _options?: PublishOptions,
      ): Promise<PublishResult> => ({
        sent: messages.filter((m) => !rejected.has(m.messageId)).map((m) => m.messageId),
        failed: messages
          .filter((m) => rejected.has(m.messageId))
          .map((m) => ({ messageId: m.messageId, error: 'InvalidParameterValue: too big' })),
      }),
    ),
  } satisfies MessagePublisher;
}

function fakeStore() {
  return {
    markSent: vi.fn<OutboxStore['markSent']>(async () => 'SENT'),
    recordSendFailure: vi.fn<OutboxStore['recordSendFailure']>(async ({ decision }) =>
      decision.kind === 'retry' ? 'RETRY_SCHEDULED' : 'FAILED',
    ),
    confirm: vi.fn<OutboxStore['confirm']>(async () => 'CONFIRMED'),
  } satisfies OutboxStore;
}

function depsWith(overrides: Partial<RelayDeps> = {}) {
  const publisher = acceptingPublisher();
  const store = fakeStore();
  const deps: RelayDeps = {
    publisher,
    store,
    queueFor: (topic) => (topic === 'order.created' ? QUEUE : undefined),
    retryPolicyFor: () => POLICY,
    clock: () => FIXED_NOW,
    random: () => 0.5,
    ...overrides,
  };
  return { deps, publisher, store };
}

describe('relayMessages', () => {
  it('marks 25 messages SENT, then sends them as SendMessageBatch chunks of 10, 10 and 5', async () => {
    const { deps, publisher, store } = depsWith();

    const report = await relayMessages(inputs(25), deps);

    expect(publisher.publishBatch.mock.calls.map(([, messages]) => messages.length)).toEqual([10, 10, 5]);
    expect(publisher.publishBatch.mock.calls.every(([queueUrl]) => queueUrl === QUEUE)).toBe(true);
    expect(store.markSent).toHaveBeenCalledTimes(25);
    expect(store.markSent).toHaveBeenCalledWith({ messageId: testMessageId(25), now: FIXED_NOW, resends: 0 });
    // Every mark came before the send of its message.
    const marked = store.markSent.mock.invocationCallOrder;
    const sent = publisher.publishBatch.mock.invocationCallOrder;
    expect(Math.max(...marked.slice(0, 10))).toBeLessThan(sent[0] ?? 0);
    expect(report).toEqual({
      sent: 25,
      alreadyAdvanced: 0,
      retryScheduled: 0,
      failed: 0,
      held: 0,
      unrecorded: [],
      topics: { 'order.created': { accepted: 25, sendFailures: 0, retryScheduled: 0, failed: 0 } },
      problems: [],
    });
  });

  it('issues the chunks in parallel: every batch is started before the first one completes', async () => {
    const pending: { resolve: (result: PublishResult) => void; messages: readonly Envelope[] }[] = [];
    const publisher: MessagePublisher = {
      publishBatch: (_queueUrl, messages) =>
        new Promise<PublishResult>((resolve) => {
          pending.push({ resolve, messages });
        }),
    };
    const { deps } = depsWith({ publisher });

    const relayed = relayMessages(inputs(25), deps);
    // Each batch is marked first (the store's calls settle on the next ticks), then sent.
    await vi.waitFor(() => expect(pending).toHaveLength(3));

    // No batch has completed yet, and all three are already in flight.
    expect(pending).toHaveLength(3);
    for (const { resolve, messages } of pending)
      resolve({ sent: messages.map((m) => m.messageId), failed: [] });
    await expect(relayed).resolves.toMatchObject({ sent: 25 });
  });

  it('counts the message attributes against the 256 KiB batch limit, not only the bodies', async () => {
    const { deps, publisher } = depsWith();
    const bare = Buffer.byteLength(messageBody(toEnvelope(outboxItem({ payload: '' }))));
    // Two bodies that together fill 256 KiB exactly: the attributes push the pair over SQS's limit.
    const payload = 'x'.repeat(128 * 1024 - bare);
    const pair = inputs(2, { payload });
    expect(pair.reduce((sum, i) => sum + Buffer.byteLength(messageBody(toEnvelope(i.message))), 0)).toBe(
      256 * 1024,
    );

    await relayMessages(pair, deps);

    expect(publisher.publishBatch.mock.calls.map(([, messages]) => messages.length)).toEqual([1, 1]);
  });

  it('sends only the envelope to the queue, not the outbox bookkeeping', async () => {
    const { deps, publisher } = depsWith();
    const [input] = inputs(1, { headers: { traceparent: 'tp' } });
    if (input === undefined) throw new Error('no input');

    await relayMessages([input], deps);

    expect(publisher.publishBatch.mock.calls[0]?.[1]).toEqual([toEnvelope(input.message)]);
    expect(publisher.publishBatch.mock.calls[0]?.[1][0]).not.toHaveProperty('status');
    expect(publisher.publishBatch.mock.calls[0]?.[1][0]).not.toHaveProperty('dueShard');
  });

  it('records a rejected entry on its message and marks the others SENT, without reporting a batch failure', async () => {
    const rejectedId = testMessageId(2);
    const { deps, store } = depsWith({ publisher: acceptingPublisher(new Set([rejectedId])) });

    const report = await relayMessages(inputs(3), deps);

    expect(store.recordSendFailure).toHaveBeenCalledTimes(1);
    // Its SENT mark (made just before the send) is undone: PENDING again, due at the next attempt.
    expect(store.recordSendFailure).toHaveBeenCalledWith({
      messageId: rejectedId,
      seenAttempts: 0,
      decision: {
        kind: 'retry',
        attempts: 1,
        refusals: 1,
        nextAttemptAt: new Date(FIXED_NOW.getTime() + 500),
      },
      error: 'InvalidParameterValue: too big',
      now: FIXED_NOW,
      markedAt: FIXED_NOW.toISOString(),
    });
    expect(store.markSent.mock.calls.map(([mark]) => mark.messageId).sort()).toEqual([
      testMessageId(1),
      testMessageId(2),
      testMessageId(3),
    ]);
    expect(report).toMatchObject({ sent: 2, retryScheduled: 1, unrecorded: [] });
  });

  it('moves a message to FAILED after the last attempt', async () => {
    const { deps, store } = depsWith({ publisher: acceptingPublisher(new Set([testMessageId(1)])) });

    const report = await relayMessages(inputs(1, { attempts: POLICY.maxAttempts - 1 }), deps);

    expect(store.recordSendFailure).toHaveBeenCalledWith({
      messageId: testMessageId(1),
      seenAttempts: POLICY.maxAttempts - 1,
      decision: { kind: 'fail', attempts: POLICY.maxAttempts, refusals: 1 },
      error: expect.any(String),
      now: FIXED_NOW,
      markedAt: FIXED_NOW.toISOString(),
    });
    expect(report).toMatchObject({ failed: 1, sent: 0 });
  });

  it('reports the record whose SENT mark could not be written, so the stream retries it, and does not send it', async () => {
    const { deps, store, publisher } = depsWith();
    store.markSent.mockImplementation(async ({ messageId }) => {
      if (messageId === testMessageId(2)) throw new Error('DynamoDB unavailable');
      return 'SENT';
    });

    const report = await relayMessages(inputs(3), deps);

    expect(report.unrecorded).toEqual(['seq-2']);
    expect(report.sent).toBe(2);
    expect(
      publisher.publishBatch.mock.calls.flatMap(([, messages]) => messages.map((m) => m.messageId)),
    ).toEqual([testMessageId(1), testMessageId(3)]);
  });

  it('reports the record whose failure could not be written', async () => {
    const { deps, store } = depsWith({ publisher: acceptingPublisher(new Set([testMessageId(1)])) });
    store.recordSendFailure.mockRejectedValue(new Error('DynamoDB unavailable'));

    const report = await relayMessages(inputs(2), deps);

    expect(report.unrecorded).toEqual(['seq-1']);
  });

  it('marks and sends a message that appears twice in a batch once', async () => {
    const { deps, publisher, store } = depsWith();
    const message = outboxItem({ messageId: testMessageId(9) });

    const report = await relayMessages(
      [
        { recordId: 'seq-1', message },
        { recordId: 'seq-2', message },
      ],
      deps,
    );

    expect(publisher.publishBatch).toHaveBeenCalledTimes(1);
    expect(publisher.publishBatch.mock.calls[0]?.[1]).toHaveLength(1);
    expect(store.markSent).toHaveBeenCalledTimes(1);
    expect(report).toMatchObject({ sent: 1, unrecorded: [] });
  });

  it('reports both records of a message that appears twice when its mark fails, and sends it not at all', async () => {
    const { deps, publisher, store } = depsWith();
    const message = outboxItem({ messageId: testMessageId(9) });
    store.markSent.mockRejectedValue(new Error('DynamoDB unavailable'));

    const report = await relayMessages(
      [
        { recordId: 'seq-1', message },
        { recordId: 'seq-2', message },
      ],
      deps,
    );

    expect(publisher.publishBatch).not.toHaveBeenCalled();
    expect(store.markSent).toHaveBeenCalledTimes(1);
    expect(report.unrecorded).toEqual(['seq-1', 'seq-2']);
  });

  it('sends nothing whose mark finds it no longer PENDING (cancelled, confirmed, or sent by someone else)', async () => {
    const { deps, publisher, store } = depsWith();
    store.markSent.mockImplementation(async ({ messageId }) =>
      messageId === testMessageId(2) ? 'ALREADY_ADVANCED' : 'SENT',
    );

    const report = await relayMessages(inputs(3), deps);

    expect(
      publisher.publishBatch.mock.calls.flatMap(([, messages]) => messages.map((m) => m.messageId)),
    ).toEqual([testMessageId(1), testMessageId(3)]);
    expect(report).toMatchObject({ sent: 2, alreadyAdvanced: 1, unrecorded: [] });
  });

  it('records a failure naming the topic when no queue is routed for it, and sends nothing', async () => {
    const { deps, publisher, store } = depsWith();

    const report = await relayMessages(inputs(1, { topic: 'payment.captured' }), deps);

    expect(publisher.publishBatch).not.toHaveBeenCalled();
    expect(store.recordSendFailure).toHaveBeenCalledWith({
      messageId: testMessageId(1),
      seenAttempts: 0,
      decision: expect.objectContaining({ kind: 'retry' }),
      error: 'no queue is routed for topic "payment.captured"',
      now: FIXED_NOW,
    });
    expect(report).toMatchObject({ sent: 0, retryScheduled: 1 });
  });

  it('records every entry of a batch whose publisher throws as failed', async () => {
    const publisher: MessagePublisher = {
      publishBatch: async () => {
        throw new Error('socket hang up');
      },
    };
    const { deps, store } = depsWith({ publisher });

    const report = await relayMessages(inputs(12), deps);

    expect(store.recordSendFailure).toHaveBeenCalledTimes(12);
    expect(
      store.recordSendFailure.mock.calls.every(([failure]) => failure.error === 'Error: socket hang up'),
    ).toBe(true);
    // Each had been marked SENT for the send: each record undoes its mark.
    expect(store.markSent).toHaveBeenCalledTimes(12);
    expect(store.recordSendFailure.mock.calls.every(([failure]) => failure.markedAt !== undefined)).toBe(
      true,
    );
    expect(report).toMatchObject({ sent: 0, retryScheduled: 12, unrecorded: [] });
  });

  it('sends each topic to its own queue', async () => {
    const { deps, publisher } = depsWith({
      queueFor: (topic) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${topic.replace('.', '-')}`,
    });

    await relayMessages(
      [
        { recordId: 's1', message: outboxItem({ messageId: testMessageId(1), topic: 'order.created' }) },
        { recordId: 's2', message: outboxItem({ messageId: testMessageId(2), topic: 'order.cancelled' }) },
      ],
      deps,
    );

    expect(
      publisher.publishBatch.mock.calls.map(([queueUrl, messages]) => [queueUrl, messages.length]),
    ).toEqual([
      ['https://sqs.eu-west-1.amazonaws.com/123456789012/order-created', 1],
      ['https://sqs.eu-west-1.amazonaws.com/123456789012/order-cancelled', 1],
    ]);
  });

  it('counts a message another writer advanced first as already advanced', async () => {
    const { deps, store } = depsWith();
    store.markSent.mockResolvedValue('ALREADY_ADVANCED');

    const report = await relayMessages(inputs(2), deps);

    expect(report).toMatchObject({ sent: 0, alreadyAdvanced: 2, unrecorded: [] });
  });

  it('does nothing for an empty batch', async () => {
    const { deps, publisher } = depsWith();

    await expect(relayMessages([], deps)).resolves.toEqual({
      sent: 0,
      alreadyAdvanced: 0,
      retryScheduled: 0,
      failed: 0,
      held: 0,
      unrecorded: [],
      topics: {},
      problems: [],
    });
    expect(publisher.publishBatch).not.toHaveBeenCalled();
  });

  describe('a message that can never be sent as stored fails alone', () => {
    /** Two good messages around one whose stored payload the relay cannot send unchanged. */
    function batchAround(payload: unknown): (RelayInput & { readonly message: OutboxItem })[] {
      const [first, , last] = inputs(3);
      if (first === undefined || last === undefined) throw new Error('no inputs');
      const bad = {
        recordId: 'seq-2',
        message: outboxItem({ messageId: testMessageId(2), payload, attempts: 1 }),
      };
      return [first, bad, last];
    }

    it.each([
      ['a BigInt', { total: 10n }, 'payload.total'],
      ['a Set', { skus: new Set(['A']) }, 'payload.skus'],
      ['a Map', { lines: new Map([['A', 1]]) }, 'payload.lines'],
      ['a typed array', { bytes: new Uint8Array([1, 2]) }, 'payload.bytes'],
      ['an unreadable stored number', { total: new UnreadableNumber('1e20') }, 'payload.total'],
    ])(
      'records %s in the payload as FAILED with the path, sends the others, reports no batch failure',
      async (_kind, payload, path) => {
        const { deps, store, publisher } = depsWith();

        const report = await relayMessages(batchAround(payload), deps);

        expect(report).toMatchObject({
          sent: 2,
          alreadyAdvanced: 0,
          retryScheduled: 0,
          failed: 1,
          unrecorded: [],
        });
        // The unsendable message was never offered to SQS: no send failure, one FAILED, named in the problems.
        expect(report.topics).toEqual({
          'order.created': { accepted: 2, sendFailures: 0, retryScheduled: 0, failed: 1 },
        });
        expect(report.problems).toEqual([
          {
            messageId: testMessageId(2),
            topic: 'order.created',
            aggregateId: 'order-1',
            outcome: 'FAILED',
            error: expect.stringContaining(path),
          },
        ]);
        expect(
          publisher.publishBatch.mock.calls.flatMap(([, messages]) => messages.map((m) => m.messageId)),
        ).toEqual([testMessageId(1), testMessageId(3)]);
        expect(store.recordSendFailure).toHaveBeenCalledWith({
          messageId: testMessageId(2),
          seenAttempts: 1,
          decision: { kind: 'fail', attempts: 2 },
          error: expect.stringContaining(path),
          now: FIXED_NOW,
        });
      },
    );

    it('records a message larger than SQS accepts as FAILED with both sizes, and sends the others', async () => {
      const { deps, store } = depsWith();

      const report = await relayMessages(batchAround('x'.repeat(300 * 1024)), deps);

      expect(report).toMatchObject({ sent: 2, failed: 1, unrecorded: [] });
      const [failure] = store.recordSendFailure.mock.calls.map(([call]) => call);
      expect(failure?.decision).toEqual({ kind: 'fail', attempts: 2 });
      expect(failure?.error).toMatch(/\d+ bytes on the wire; SQS accepts at most 262144/);
    });

    it('records an input already known to be unsendable, with its reason', async () => {
      const { deps, store } = depsWith();
      const unsendable = {
        messageId: testMessageId(9),
        attempts: 0,
        reason: 'unreadable outbox item: attempts',
      };

      const report = await relayMessages([{ recordId: 'seq-9', unsendable }, ...inputs(1)], deps);

      expect(report).toMatchObject({ sent: 1, failed: 1, unrecorded: [] });
      expect(store.recordSendFailure).toHaveBeenCalledWith(
        expect.objectContaining({ messageId: testMessageId(9), error: unsendable.reason }),
      );
    });

    it('reports the record of an unsendable message for retry only when its failure could not be recorded', async () => {
      const { deps, store } = depsWith();
      store.recordSendFailure.mockRejectedValueOnce(new Error('ProvisionedThroughputExceededException'));

      const report = await relayMessages(batchAround({ total: 10n }), deps);

      expect(report).toMatchObject({ sent: 2, failed: 0, unrecorded: ['seq-2'] });
    });
  });

  it('treats a message stored without `attempts` as never sent: it is sent, and a failure counts its first attempt', async () => {
    const { deps, store } = depsWith({ publisher: acceptingPublisher(new Set([testMessageId(1)])) });
    const { attempts: _attempts, ...bare } = outboxItem({ messageId: testMessageId(1) });

    await relayMessages([{ recordId: 'seq-1', message: bare as OutboxItem }], deps);

    expect(store.recordSendFailure).toHaveBeenCalledWith(
      expect.objectContaining({
        seenAttempts: 0,
        decision: expect.objectContaining({ kind: 'retry', attempts: 1 }),
      }),
    );
  });
});

describe('relayMessages with ordered messages', () => {
  const ORDER_KEY = 'order#order-1';

  /** Message n of order key `orderKey` with seq `seq`. */
  function ordered(
    n: number,
    seq: number,
    orderKey = ORDER_KEY,
  ): RelayInput & { readonly message: OutboxItem } {
    return {
      recordId: `seq-${n}`,
      message: outboxItem({
        messageId: testMessageId(n),
        aggregateId: orderKey.split('#')[1],
        orderKey,
        seq,
      }),
    };
  }

  /** A publisher whose calls wait until the test lets them through, so the order of calls can be watched. */
  function gatedPublisher() {
    const calls: { messages: readonly Envelope[]; release: () => void }[] = [];
    const publisher: MessagePublisher = {
      publishBatch: (_queueUrl, messages) =>
        new Promise<PublishResult>((resolve) => {
          calls.push({
            messages,
            release: () => resolve({ sent: messages.map((m) => m.messageId), failed: [] }),
          });
        }),
    };
    return { publisher, calls };
  }

  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('sends an order key of 12 messages as two batches in seq order, the second only after the first', async () => {
    const { publisher, calls } = gatedPublisher();
    const { deps } = depsWith({ publisher });
    // Given in reverse, as a retried stream batch or the due index may.
    const group = Array.from({ length: 12 }, (_, i) => ordered(12 - i, 12 - i));

    const relayed = relayMessages(group, deps);
    await flush();

    expect(calls).toHaveLength(1);
    expect(calls[0]?.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    calls[0]?.release();
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.messages.map((m) => m.seq)).toEqual([11, 12]);
    calls[1]?.release();
    await expect(relayed).resolves.toMatchObject({ sent: 12, held: 0 });
  });

  it('packs whole order keys into shared batches, never splitting a key that fits one', async () => {
    const { deps, publisher } = depsWith();
    const keys = ['order#a', 'order#b', 'order#c'];
    // Three keys of 4 messages each, interleaved: 12 messages, but a key's 4 stay in one batch.
    const interleaved = [1, 2, 3, 4].flatMap((seq) => keys.map((key, k) => ordered(k * 10 + seq, seq, key)));

    await relayMessages(interleaved, deps);

    const batches = publisher.publishBatch.mock.calls.map(([, messages]) =>
      messages.map((m) => `${m.orderKey}:${m.seq}`),
    );
    expect(batches).toEqual([
      [
        'order#a:1',
        'order#a:2',
        'order#a:3',
        'order#a:4',
        'order#b:1',
        'order#b:2',
        'order#b:3',
        'order#b:4',
      ],
      ['order#c:1', 'order#c:2', 'order#c:3', 'order#c:4'],
    ]);
  });

  it('holds the later messages of an order key after a failed entry (PENDING, no attempt) and sends the other keys', async () => {
    const clock = manualClock();
    const db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
    const queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, clock.now);
    const store = new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' });
    const group = Array.from({ length: 12 }, (_, i) => ordered(i + 1, i + 1));
    const other = [1, 2, 3].map((seq) => ordered(100 + seq, seq, 'order#order-2'));
    for (const { message } of [...group, ...other]) {
      await db.send(new PutCommand({ TableName: 'outbox', Item: { ...message } }));
    }
    const rejected = testMessageId(3);
    const publisher: MessagePublisher = {
      async publishBatch(queueUrl, messages, options) {
        const accepted = messages.filter((m) => m.messageId !== rejected);
        await queues.publishBatch(queueUrl, accepted, options);
        return {
          sent: accepted.map((m) => m.messageId),
          failed: messages
            .filter((m) => m.messageId === rejected)
            .map((m) => ({ messageId: m.messageId, error: 'KMS.DisabledException: key disabled' })),
        };
      },
    };

    const report = await relayMessages([...group, ...other], {
      ...depsWith().deps,
      publisher,
      store,
      clock: clock.now,
    });

    const stored = async (n: number) =>
      (await db.send(new GetCommand({ TableName: 'outbox', Key: { messageId: testMessageId(n) } }))).Item;
    expect(await stored(11)).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(await stored(12)).toMatchObject({ status: 'PENDING', attempts: 0 });
    expect(await stored(3)).toMatchObject({ status: 'PENDING', attempts: 1, lastError: expect.any(String) });
    for (const n of [1, 2, 4, 10, 101, 102, 103]) expect(await stored(n)).toMatchObject({ status: 'SENT' });
    const onQueue = queues.peek(QUEUE).map(({ body }) => (JSON.parse(body) as Envelope).messageId);
    expect(onQueue).not.toContain(testMessageId(11));
    expect(onQueue).not.toContain(testMessageId(12));
    expect(onQueue).toEqual(expect.arrayContaining([101, 102, 103].map(testMessageId)));
    expect(report).toMatchObject({ sent: 12, retryScheduled: 1, held: 2, unrecorded: [] });
    expect(report.problems.filter((p) => p.outcome === 'HELD')).toEqual(
      [11, 12].map((n) => ({
        messageId: testMessageId(n),
        topic: 'order.created',
        aggregateId: 'order-1',
        orderKey: ORDER_KEY,
        seq: n,
        outcome: 'HELD',
        error: expect.stringContaining(`seq 3 of ${ORDER_KEY}`),
      })),
    );
  });

  it('gives the publisher each message’s delivery round, which a replay moves on', async () => {
    const { deps, publisher } = depsWith();
    const fresh = outboxItem({ messageId: testMessageId(1) });
    const resent = outboxItem({ messageId: testMessageId(2), resends: 2 });
    const replayed = outboxItem({ messageId: testMessageId(3), resends: 1, replays: 1 });

    await relayMessages(
      [fresh, resent, replayed].map((message, i) => ({ recordId: `seq-${i}`, message })),
      deps,
    );

    const options = publisher.publishBatch.mock.calls[0]?.[2];
    expect(options?.deliveryRounds).toEqual(
      new Map([
        [testMessageId(1), 0],
        [testMessageId(2), 2],
        [testMessageId(3), deliveryRoundOf({ resends: 1, replays: 1 })],
      ]),
    );
  });

  describe('who may mark a message SENT', () => {
    const clock = manualClock();
    let db: MemoryDocumentClient;
    let store: DynamoOutboxStore;

    async function stored(n: number) {
      return (await db.send(new GetCommand({ TableName: 'outbox', Key: { messageId: testMessageId(n) } })))
        .Item;
    }

    async function put(item: OutboxItem): Promise<void> {
      db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
      store = new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' });
      await db.send(new PutCommand({ TableName: 'outbox', Item: { ...item } }));
    }

    it('the stream relay leaves a message a sweeper holds a live claim on to that sweeper, and sends nothing', async () => {
      // The sweeper claimed seq 2 and is deciding whether it must wait for seq 1; the relay's late record arrives.
      const leased = ordered(2, 2).message;
      await put({
        ...leased,
        leaseOwner: 'sweeper-run-3',
        leaseUntil: new Date(clock.now().getTime() + 60_000).toISOString(),
      } as OutboxItem);
      const { deps, publisher } = depsWith();

      const report = await relayMessages([{ recordId: 's-2', message: leased }], {
        ...deps,
        store,
        clock: clock.now,
      });

      expect(report).toMatchObject({ sent: 0, alreadyAdvanced: 1 });
      expect(publisher.publishBatch).not.toHaveBeenCalled();
      expect(await stored(2)).toMatchObject({ status: 'PENDING', leaseOwner: 'sweeper-run-3' });
    });

    it('a sweeper whose claim lapsed sends nothing another sweeper since held back behind its predecessor', async () => {
      // Sweeper A's claim ran out; B claimed the message, found seq 1 not out yet and released it for later.
      const heldBack = ordered(2, 2).message;
      await put({ ...heldBack, nextAttemptAt: new Date(clock.now().getTime() + 300_000).toISOString() });
      const { deps, publisher } = depsWith();

      const report = await relayMessages([{ recordId: heldBack.messageId, message: heldBack }], {
        ...deps,
        store,
        clock: clock.now,
        claimedBy: 'sweeper-a',
      });

      expect(report).toMatchObject({ sent: 0, alreadyAdvanced: 1 });
      expect(publisher.publishBatch).not.toHaveBeenCalled();
      expect(await stored(2)).toMatchObject({ status: 'PENDING' });
    });
  });
});
