import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { writeWithOutbox } from '../../shared/aws/outbox-writer.ts';
import {
  CLAIM_CHECK_HEADER,
  CLAIM_CHECK_PREFIX,
  type ClaimCheckPayload,
  sha256Hex,
} from '../../shared/claim-check/claim-check-reference.ts';
import { consumerParts, consumeSqsBatch, type SqsConsumer } from '../../shared/lambda/consumer-handler.ts';
import { outboxWriterFromEnv } from '../../shared/lambda/outbox-writer.ts';
import { createMessage, type Envelope } from '../../shared/message/envelope.ts';
import { SQS_MAX_MESSAGE_BYTES } from '../../shared/relay/wire-format.ts';
import { OutboxSettings } from '../../shared/settings/outbox-settings.ts';
import { readSetting } from '../../shared/settings/setting.ts';
import { describeOnMoto, TEST_BACKEND } from './support/backend.ts';
import { documentClient, scanAll, startRuntime, waitFor } from './support.ts';

const CONSUMER = 'Outbox/InventoryConsumer';

/** What the consumer function received (SQS bodies) and what its plan was given. */
const bodies: string[] = [];
const planned: Envelope[] = [];

let runtime: LocalRuntime;

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  runtime = await startRuntime({
    handlers: {
      // The library's consumer, built from the deployed function's environment (its inbox, queues and
      // CLAIM_CHECK_BUCKET), with a plan that records what it sees instead of reserving stock.
      [CONSUMER]: (_base, env) => {
        const consumer: SqsConsumer = {
          ...consumerParts(env, () => (message) => {
            planned.push(message);
            return { reject: 'RECORDED' };
          }),
          logger: { info: () => {}, warn: () => {} },
        };
        return (event, context) => {
          for (const record of (event as SQSEvent).Records) bodies.push(record.body);
          return consumeSqsBatch(event as SQSEvent, context, consumer);
        };
      },
    },
  });
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

describeOnMoto('the claim check needs S3, which the embedded backend does not serve')(
  'a 1 MB payload through the claim check (moto)',
  () => {
    it('goes to S3, travels as a reference through the relay, and reaches the consumer’s plan intact', async () => {
      const writerEnv = runtime.env.CreateOrder ?? {};
      const writer = outboxWriterFromEnv(writerEnv, documentClient(runtime));
      const bucket = readSetting(writerEnv, OutboxSettings.claimCheckBucket);
      const payload = {
        orderId: 'order-big',
        customerId: 'customer-1',
        items: [{ sku: 'SKU-APPLE', quantity: 1 }],
        attachment: `data:✓🍏"${'a'.repeat(1_048_576)}`,
      };
      const message = createMessage({ topic: 'order.created', aggregateId: 'order-big', payload });

      // The order's first message, numbered from its version as the example's orders are.
      await writeWithOutbox(writer, {
        actions: [],
        messages: [message],
        aggregateVersions: { 'order-big': 1 },
      });

      const confirmed = await waitFor(
        async () => {
          const items = await scanAll(runtime, 'outbox');
          return items.find((item) => item.messageId === message.messageId && item.status === 'CONFIRMED');
        },
        60_000,
        'the claim-checked message to be confirmed',
      );
      expect(confirmed).toMatchObject({ outcome: 'RECORDED' });

      // As written, plus its place in the order's sequence (order.created is ordered in the example).
      expect(planned.filter((seen) => seen.messageId === message.messageId)).toEqual([
        { ...message, orderKey: `order#${message.aggregateId}`, seq: 1 },
      ]);

      const received = bodies
        .map((body) => JSON.parse(body) as Envelope<ClaimCheckPayload>)
        .filter((sent) => sent.messageId === message.messageId);
      expect(received).toHaveLength(1);
      const [sent] = received;
      const stored = Buffer.from(JSON.stringify(payload));
      expect(sent?.payload).toEqual({
        claimCheck: {
          bucket,
          key: `${CLAIM_CHECK_PREFIX}${message.messageId}/${sha256Hex(stored)}.json`,
          size: stored.byteLength,
          sha256: sha256Hex(stored),
        },
      });
      expect(sent?.headers[CLAIM_CHECK_HEADER]).toBe('1');
      expect(Buffer.byteLength(bodies.find((body) => body.includes(message.messageId)) ?? '')).toBeLessThan(
        SQS_MAX_MESSAGE_BYTES / 100,
      );

      const s3 = new S3Client({ ...runtime.clientConfig, forcePathStyle: true });
      const object = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: sent?.payload.claimCheck.key }),
      );
      expect(Buffer.from((await object.Body?.transformToByteArray()) ?? [])).toEqual(stored);
    }, 90_000);
  },
);
