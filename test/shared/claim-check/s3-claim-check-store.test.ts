import {
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3ClaimCheckStore } from '../../../shared/aws/s3-claim-check-store.ts';
import { ClaimCheckObjectMissingError } from '../../../shared/claim-check/claim-check-errors.ts';
import { sha256Hex } from '../../../shared/claim-check/claim-check-reference.ts';
import { consumerParts } from '../../../shared/lambda/consumer-handler.ts';
import { outboxWriterFromEnv } from '../../../shared/lambda/outbox-writer.ts';

const s3 = mockClient(S3Client);
const store = new S3ClaimCheckStore(new S3Client({ region: 'eu-west-1' }));
const body = Buffer.from('{"orderId":"order-1"}');
const object = {
  bucket: 'claims',
  key: 'claim-check/01/abc.json',
  size: body.byteLength,
  sha256: sha256Hex(body),
  body,
};

beforeEach(() => s3.reset());

describe('S3ClaimCheckStore', () => {
  it('puts the payload as JSON with its SHA-256 for S3 to check', async () => {
    s3.on(PutObjectCommand).resolves({});

    await store.put(object);

    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toEqual({
      Bucket: 'claims',
      Key: 'claim-check/01/abc.json',
      Body: body,
      ContentType: 'application/json',
      ChecksumSHA256: createHashBase64(body),
    });
  });

  it('reads the payload’s bytes back', async () => {
    // The part of the SDK's streaming body the store reads.
    const streamed = { transformToByteArray: async () => Uint8Array.from(body) };
    s3.on(GetObjectCommand).resolves({ Body: streamed as never });

    expect(Buffer.from(await store.get(object))).toEqual(body);
  });

  it.each([
    ['NOT_FOUND', new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } })],
    [
      'ACCESS_DENIED',
      new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 } }),
    ],
  ])('turns %s into a ClaimCheckObjectMissingError', async (reason, error) => {
    s3.on(GetObjectCommand).rejects(error);

    const read = store.get(object);

    await expect(read).rejects.toBeInstanceOf(ClaimCheckObjectMissingError);
    await expect(read).rejects.toMatchObject({ reason, bucket: 'claims', key: object.key, cause: error });
  });

  it('lets any other S3 failure through as it is, to be retried', async () => {
    const throttled = new S3ServiceException({
      name: 'SlowDown',
      $fault: 'server',
      $metadata: { httpStatusCode: 503 },
    });
    s3.on(GetObjectCommand).rejects(throttled);

    await expect(store.get(object)).rejects.toBe(throttled);
  });
});

describe('the claim check from the environment', () => {
  const base = { OUTBOX_TABLE: 'outbox', AWS_REGION: 'eu-west-1' };

  it('gives a writer the bucket and threshold when CLAIM_CHECK_BUCKET is set, and none otherwise', () => {
    const writer = outboxWriterFromEnv({
      ...base,
      CLAIM_CHECK_BUCKET: 'claims',
      CLAIM_CHECK_THRESHOLD_BYTES: '2048',
    });
    expect(writer.claimCheck).toMatchObject({ bucket: 'claims', thresholdBytes: 2048 });
    expect(writer.claimCheck?.store).toBeInstanceOf(S3ClaimCheckStore);
    expect(outboxWriterFromEnv(base).claimCheck).toBeUndefined();
    expect(() =>
      outboxWriterFromEnv({ ...base, CLAIM_CHECK_BUCKET: 'claims', CLAIM_CHECK_THRESHOLD_BYTES: '512' }),
    ).toThrow(/CLAIM_CHECK_THRESHOLD_BYTES/);
  });

  it('gives a consumer the bucket it may read when CLAIM_CHECK_BUCKET is set', () => {
    const env = {
      ...base,
      INBOX_TABLE: 'inbox',
      SOURCE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
      DEAD_LETTER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq',
      MAX_RECEIVE_COUNT: '5',
    };
    const plan = () => () => ({ reject: 'X' });
    expect(consumerParts({ ...env, CLAIM_CHECK_BUCKET: 'claims' }, plan).deps.claimCheck).toMatchObject({
      bucket: 'claims',
    });
    expect(consumerParts(env, plan).deps.claimCheck).toBeUndefined();
  });
});

function createHashBase64(bytes: Buffer): string {
  return Buffer.from(sha256Hex(bytes), 'hex').toString('base64');
}
