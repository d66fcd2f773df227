import { describe, expect, it, vi } from 'vitest';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import {
  ClaimCheckIntegrityError,
  ClaimCheckObjectMissingError,
} from '../../../shared/claim-check/claim-check-errors.ts';
import {
  CLAIM_CHECK_HEADER,
  CLAIM_CHECK_PREFIX,
  type ClaimCheckPayload,
  DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
  sha256Hex,
} from '../../../shared/claim-check/claim-check-reference.ts';
import type { ClaimCheckStore } from '../../../shared/claim-check/claim-check-store.ts';
import { resolveClaimCheck } from '../../../shared/claim-check/resolve-claim-check.ts';
import type { FailureHandling, QueueOperations } from '../../../shared/consumer/failure-handling.ts';
import {
  ConfigError,
  InvalidMessageError,
  MessageTooLargeError,
  OutboxError,
  PoisonMessageError,
  TransactionConditionError,
} from '../../../shared/errors.ts';
import { consumeSqsBatch } from '../../../shared/lambda/consumer-handler.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { toEnvelope } from '../../../shared/relay/relay-messages.ts';
import { messageBody, messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../../../shared/relay/wire-format.ts';
import {
  envelope,
  FIXED_NOW,
  lambdaContext,
  MEMORY_TABLE_SCHEMAS,
  sqsRecord,
  testMessageId,
  withReceiveCount,
} from '../../support/factories.ts';

const BUCKET = 'shop-claims';
const DAY_MS = 86_400_000;

/** An in-memory outbox, inbox and claim-check bucket (expiring `claim-check/` objects after 47 days). */
function world() {
  const dynamo = new MemoryDocumentClient(
    { outbox: MEMORY_TABLE_SCHEMAS.outbox, inbox: MEMORY_TABLE_SCHEMAS.inbox },
    { clock: () => FIXED_NOW },
  );
  let now = FIXED_NOW;
  const s3 = new MemoryObjectStore({ clock: () => now });
  s3.createBucket(BUCKET, [{ prefix: CLAIM_CHECK_PREFIX, expireAfterDays: 47 }]);
  const writer = {
    client: dynamo.asDocumentClient(),
    outboxTable: 'outbox',
    clock: () => FIXED_NOW,
    claimCheck: { store: s3, bucket: BUCKET },
  };
  const consumeDeps: ConsumeDeps = {
    client: dynamo.asDocumentClient(),
    inboxTable: 'inbox',
    clock: () => FIXED_NOW,
    claimCheck: { store: s3, bucket: BUCKET },
  };
  return {
    dynamo,
    s3,
    writer,
    consumeDeps,
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
      return now;
    },
  };
}

/** A message whose wire size is exactly `bytes` (a padded payload). */
function messageOfWireSize(bytes: number, messageId = testMessageId(1)): Envelope {
  const base = envelope({ messageId, payload: { orderId: 'order-1', notes: '' } });
  const padding = bytes - messageSizeBytes(base);
  const message = envelope({ messageId, payload: { orderId: 'order-1', notes: 'n'.repeat(padding) } });
  expect(messageSizeBytes(message)).toBe(bytes);
  return message;
}

/** A large payload with characters JSON escapes and multi-byte ones, so bytes and characters differ. */
function largePayload(kilobytes: number): Record<string, unknown> {
  return {
    orderId: 'order-1',
    lines: Array.from({ length: kilobytes }, (_, index) => ({
      index,
      text: `ligne ${index}: "quoted" ✓ 🍏 ${'x'.repeat(980)}`,
    })),
  };
}

/** The envelope the relay would send for the stored outbox item, read back as the consumer parses it. */
function sentEnvelope(dynamo: MemoryDocumentClient, messageId: string): Envelope {
  const item = dynamo.items('outbox').find((candidate) => candidate.messageId === messageId);
  if (item === undefined) throw new Error(`no outbox item ${messageId}`);
  return JSON.parse(messageBody(toEnvelope(item as unknown as OutboxItem))) as Envelope;
}

const seenBy = () => {
  const seen: Envelope[] = [];
  const plan = (message: Envelope) => {
    seen.push(message);
    return { reject: 'SEEN' } as const;
  };
  return { seen, plan };
};

describe('the claim check threshold', () => {
  it('keeps a message of exactly the threshold inline and claim-checks one byte more', async () => {
    const { dynamo, s3, writer } = world();
    const atThreshold = messageOfWireSize(DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES, testMessageId(1));
    const overThreshold = messageOfWireSize(DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES + 1, testMessageId(2));

    await writeWithOutbox(writer, { actions: [], messages: [atThreshold, overThreshold] });

    expect(sentEnvelope(dynamo, atThreshold.messageId)).toEqual(atThreshold);
    const sent = sentEnvelope(dynamo, overThreshold.messageId);
    expect(sent.headers[CLAIM_CHECK_HEADER]).toBe('1');
    expect(s3.keys(BUCKET)).toEqual([(sent.payload as ClaimCheckPayload).claimCheck.key]);
  });

  it('follows the writer’s own threshold', async () => {
    const { s3, writer } = world();
    const message = messageOfWireSize(2_000);

    await writeWithOutbox(
      { ...writer, claimCheck: { ...writer.claimCheck, thresholdBytes: 1_999 } },
      { actions: [], messages: [message] },
    );

    expect(s3.keys(BUCKET)).toHaveLength(1);
  });

  it('refuses a threshold the settings contract refuses, before anything is written', async () => {
    const { dynamo, s3, writer } = world();

    await expect(
      writeWithOutbox(
        { ...writer, claimCheck: { ...writer.claimCheck, thresholdBytes: 300 * 1024 } },
        { actions: [], messages: [envelope()] },
      ),
    ).rejects.toThrow(/CLAIM_CHECK_THRESHOLD_BYTES/);
    expect(dynamo.itemCount('outbox')).toBe(0);
    expect(s3.keys(BUCKET)).toEqual([]);
  });

  it('still refuses a message over the queue limit when there is no claim check', async () => {
    const { dynamo, writer } = world();
    const { claimCheck: _none, ...withoutClaimCheck } = writer;
    const message = envelope({ payload: largePayload(300) });

    await expect(writeWithOutbox(withoutClaimCheck, { actions: [], messages: [message] })).rejects.toThrow(
      MessageTooLargeError,
    );
    expect(dynamo.itemCount('outbox')).toBe(0);
  });
});

describe('a claim-checked message', () => {
  it('carries only the reference in the outbox and on the wire, and gives the consumer exactly the payload', async () => {
    const { dynamo, s3, writer, consumeDeps } = world();
    const payload = largePayload(1_024);
    const message = envelope({ payload, headers: { traceparent: 't' } });

    await writeWithOutbox(writer, { actions: [], messages: [message] });

    const sent = sentEnvelope(dynamo, message.messageId);
    const stored = JSON.stringify(payload);
    const key = `${CLAIM_CHECK_PREFIX}${message.messageId}/${sha256Hex(Buffer.from(stored))}.json`;
    expect(sent.payload).toEqual({
      claimCheck: {
        bucket: BUCKET,
        key,
        size: Buffer.byteLength(stored),
        sha256: sha256Hex(Buffer.from(stored)),
      },
    });
    expect(messageSizeBytes(sent)).toBeLessThan(1_024);
    expect(s3.keys(BUCKET)).toEqual([key]);

    const { seen, plan } = seenBy();
    const result = await consumeMessage(sent, plan, consumeDeps);

    expect(result.kind).toBe('REJECTED');
    expect(seen).toEqual([message]);
    expect(seen[0]?.headers).toEqual({ traceparent: 't' });
  });

  it('lets the relay send a message of 1 MB payload within SQS’s limit', async () => {
    const { dynamo, writer } = world();
    const message = envelope({ payload: largePayload(1_024) });

    await writeWithOutbox(writer, { actions: [], messages: [message] });

    expect(messageSizeBytes(sentEnvelope(dynamo, message.messageId))).toBeLessThan(SQS_MAX_MESSAGE_BYTES);
  });

  it('fails on a payload whose bytes no longer match the reference, without planning it', async () => {
    const { dynamo, s3, writer, consumeDeps } = world();
    const message = envelope({ payload: largePayload(100) });
    await writeWithOutbox(writer, { actions: [], messages: [message] });
    const sent = sentEnvelope(dynamo, message.messageId);
    const { key } = (sent.payload as ClaimCheckPayload).claimCheck;
    s3.overwrite(BUCKET, key, Buffer.from(JSON.stringify({ ...largePayload(100), orderId: 'order-2' })));
    const { seen, plan } = seenBy();

    const consumed = consumeMessage(sent, plan, consumeDeps);

    await expect(consumed).rejects.toThrow(ClaimCheckIntegrityError);
    await expect(consumed).rejects.toThrow(/SHA-256/);
    await expect(consumed).rejects.toBeInstanceOf(PoisonMessageError);
    expect(seen).toEqual([]);
    expect(dynamo.itemCount('inbox')).toBe(0);
  });

  it('fails with a named error when the object is missing, without planning it or recording it', async () => {
    const { dynamo, s3, writer, consumeDeps } = world();
    const message = envelope({ payload: largePayload(100) });
    await writeWithOutbox(writer, { actions: [], messages: [message] });
    const sent = sentEnvelope(dynamo, message.messageId);
    const { key } = (sent.payload as ClaimCheckPayload).claimCheck;
    s3.delete(BUCKET, key);
    const { seen, plan } = seenBy();

    const consumed = consumeMessage(sent, plan, consumeDeps);

    await expect(consumed).rejects.toThrow(ClaimCheckObjectMissingError);
    await expect(consumed).rejects.toThrow(`s3://${BUCKET}/${key} does not exist`);
    expect(seen).toEqual([]);
    expect(dynamo.itemCount('inbox')).toBe(0);
  });

  it('refuses a reference outside the consumer’s bucket or prefix', async () => {
    const { dynamo, writer, consumeDeps } = world();
    const message = envelope({ payload: largePayload(100) });
    await writeWithOutbox(writer, { actions: [], messages: [message] });
    const sent = sentEnvelope(dynamo, message.messageId);
    const reference = (sent.payload as ClaimCheckPayload).claimCheck;
    const elsewhere = { ...sent, payload: { claimCheck: { ...reference, bucket: 'someone-elses' } } };
    const get = vi.fn<ClaimCheckStore['get']>();

    await expect(
      resolveClaimCheck(elsewhere, { store: { put: vi.fn(), get, remove: vi.fn() }, bucket: BUCKET }),
    ).rejects.toThrow(ClaimCheckIntegrityError);
    await expect(
      resolveClaimCheck(
        { ...sent, payload: { claimCheck: { ...reference, key: 'secrets/keys.json' } } },
        consumeDeps.claimCheck,
      ),
    ).rejects.toThrow(ClaimCheckIntegrityError);
    expect(get).not.toHaveBeenCalled();
  });

  it('fails, naming CLAIM_CHECK_BUCKET, at a consumer that reads no claim checks', async () => {
    const { dynamo, writer, consumeDeps } = world();
    const message = envelope({ payload: largePayload(100) });
    await writeWithOutbox(writer, { actions: [], messages: [message] });
    const { claimCheck: _none, ...withoutClaimCheck } = consumeDeps;
    const { seen, plan } = seenBy();

    await expect(
      consumeMessage(sentEnvelope(dynamo, message.messageId), plan, withoutClaimCheck),
    ).rejects.toThrow(ConfigError);
    await expect(
      consumeMessage(sentEnvelope(dynamo, message.messageId), plan, withoutClaimCheck),
    ).rejects.toThrow(/CLAIM_CHECK_BUCKET/);
    expect(seen).toEqual([]);
  });

  it('refuses a message marked as claim-checked whose payload is no reference', async () => {
    const { consumeDeps } = world();
    const forged = envelope({ headers: { [CLAIM_CHECK_HEADER]: '1' } });

    await expect(consumeMessage(forged, seenBy().plan, consumeDeps)).rejects.toThrow(
      ClaimCheckIntegrityError,
    );
  });

  it('refuses to write a message that sets the claim-check header itself', async () => {
    const { dynamo, s3, writer } = world();
    const forged = envelope({ headers: { [CLAIM_CHECK_HEADER]: '1' } });

    await expect(writeWithOutbox(writer, { actions: [], messages: [forged] })).rejects.toThrow(
      InvalidMessageError,
    );
    expect(dynamo.itemCount('outbox')).toBe(0);
    expect(s3.keys(BUCKET)).toEqual([]);
  });
});

describe('the order of writes', () => {
  it('stores the object before the transaction that refers to it', async () => {
    const { dynamo, s3, writer } = world();
    const events: string[] = [];
    const store: ClaimCheckStore = {
      put: async (object) => {
        events.push(`put ${object.key}; outbox holds ${dynamo.itemCount('outbox')}`);
        await s3.put(object);
      },
      get: (location) => s3.get(location),
      remove: (location) => s3.remove(location),
    };
    dynamo.onChange((change) => events.push(`commit ${change.tableName}`));
    const message = envelope({ payload: largePayload(100) });

    await writeWithOutbox(
      { ...writer, claimCheck: { store, bucket: BUCKET } },
      { actions: [], messages: [message] },
    );

    expect(events).toEqual([`put ${s3.keys(BUCKET)[0]}; outbox holds 0`, 'commit outbox']);
  });

  it('writes nothing to DynamoDB when the object cannot be stored', async () => {
    const { dynamo, writer } = world();
    const failing: ClaimCheckStore = {
      put: async () => {
        throw new Error('S3 is down');
      },
      get: vi.fn(),
      remove: vi.fn(),
    };
    const message = envelope({ payload: largePayload(100) });

    await expect(
      writeWithOutbox(
        { ...writer, claimCheck: { store: failing, bucket: BUCKET } },
        { actions: [], messages: [message] },
      ),
    ).rejects.toThrow('S3 is down');
    expect(dynamo.itemCount('outbox')).toBe(0);
  });

  it('leaves only an unreferenced object when the transaction fails, which the lifecycle rule removes', async () => {
    const { dynamo, s3, writer, advance } = world();
    dynamo.createTable('orders', MEMORY_TABLE_SCHEMAS.orders);
    const orderExists = {
      ConditionCheck: {
        TableName: 'orders',
        Key: { orderId: 'order-1' },
        ConditionExpression: 'attribute_exists(orderId)',
      },
    };
    const message = envelope({ payload: largePayload(100) });

    await expect(writeWithOutbox(writer, { actions: [orderExists], messages: [message] })).rejects.toThrow(
      TransactionConditionError,
    );

    expect(dynamo.itemCount('outbox')).toBe(0);
    const [orphan] = s3.keys(BUCKET);
    expect(orphan?.startsWith(`${CLAIM_CHECK_PREFIX}${message.messageId}/`)).toBe(true);
    expect(s3.runLifecycle(advance(46 * DAY_MS))).toEqual([]);
    expect(s3.runLifecycle(advance(DAY_MS))).toEqual([orphan]);
    expect(s3.keys(BUCKET)).toEqual([]);
  });

  it('never overwrites the object of a committed message when its id is reused with another payload', async () => {
    const { dynamo, s3, writer, consumeDeps } = world();
    const first = envelope({ payload: largePayload(100) });
    await writeWithOutbox(writer, { actions: [], messages: [first] });
    const retried = envelope({ payload: { ...largePayload(100), orderId: 'order-2' } });

    // Refused by the outbox's condition (or, here, as a reused idempotency token): the message stays the first.
    await expect(writeWithOutbox(writer, { actions: [], messages: [retried] })).rejects.toThrow(OutboxError);

    expect(s3.keys(BUCKET)).toHaveLength(2);
    const { seen, plan } = seenBy();
    await consumeMessage(sentEnvelope(dynamo, first.messageId), plan, consumeDeps);
    expect(seen.map((message) => message.payload)).toEqual([first.payload]);
  });
});

describe('a claim-checked message in an SQS batch', () => {
  const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
  const DLQ = `${SOURCE}-dlq`;

  function failureHandling() {
    const queues = {
      changeVisibility: vi.fn<QueueOperations['changeVisibility']>(),
      deadLetter: vi.fn<QueueOperations['deadLetter']>(),
      requeue: vi.fn<QueueOperations['requeue']>(),
    };
    return {
      queues,
      sourceQueueUrl: SOURCE,
      deadLetterQueueUrl: DLQ,
      maxReceiveCount: 3,
      backoff: { baseSeconds: 10, maxSeconds: 900 },
      random: () => 0.5,
    } satisfies FailureHandling;
  }

  async function missingObjectRecord() {
    const setup = world();
    const message = envelope({ payload: largePayload(100) });
    await writeWithOutbox(setup.writer, { actions: [], messages: [message] });
    const sent = sentEnvelope(setup.dynamo, message.messageId);
    setup.s3.delete(BUCKET, (sent.payload as ClaimCheckPayload).claimCheck.key);
    return { ...setup, record: sqsRecord(sent) };
  }

  it('retries a message whose object is missing, then dead-letters it with the reason', async () => {
    const { record, consumeDeps } = await missingObjectRecord();
    const failures = failureHandling();
    const consumer = {
      plan: seenBy().plan,
      deps: consumeDeps,
      logger: { info: vi.fn(), warn: vi.fn() },
      failures,
    };

    const first = await consumeSqsBatch(
      { Records: [withReceiveCount(record, 1)] },
      lambdaContext(),
      consumer,
    );
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(failures.queues.changeVisibility).toHaveBeenCalledTimes(1);
    expect(failures.queues.deadLetter).not.toHaveBeenCalled();

    const last = await consumeSqsBatch({ Records: [withReceiveCount(record, 3)] }, lambdaContext(), consumer);
    expect(last.batchItemFailures).toEqual([]);
    expect(failures.queues.deadLetter).toHaveBeenCalledWith(
      expect.objectContaining({
        queueUrl: DLQ,
        reason: 'MAX_RECEIVES',
        lastError: expect.stringMatching(/^ClaimCheckObjectMissingError: .* does not exist$/),
      }),
    );
  });

  it('dead-letters a message whose object was altered at once, as poison', async () => {
    const { record, consumeDeps, s3 } = await missingObjectRecord();
    const reference = (JSON.parse(record.body) as Envelope<ClaimCheckPayload>).payload.claimCheck;
    s3.overwrite(BUCKET, reference.key, Buffer.from('{"orderId":"forged"}'));
    const failures = failureHandling();
    const consumer = {
      plan: seenBy().plan,
      deps: consumeDeps,
      logger: { info: vi.fn(), warn: vi.fn() },
      failures,
    };

    const response = await consumeSqsBatch(
      { Records: [withReceiveCount(record, 1)] },
      lambdaContext(),
      consumer,
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(failures.queues.deadLetter).toHaveBeenCalledWith(
      expect.objectContaining({
        reason: 'POISON',
        lastError: expect.stringMatching(/^ClaimCheckIntegrityError/),
      }),
    );
  });
});
