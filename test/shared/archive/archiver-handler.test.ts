import { gunzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createS3Client } from '../../../shared/aws/s3-archive-store.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { archiverStore, createArchiverHandler } from '../../../shared/lambda/archiver-handler.ts';
import { lambdaContext } from '../../support/factories.ts';
import { expiredItem, ttlRemoval } from './ttl-records.ts';

const s3 = mockClient(S3Client);
const env = { ARCHIVE_BUCKET: 'orders-archive', AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT' };
const handler = createArchiverHandler();

beforeEach(() => {
  s3.reset();
});

describe('createArchiverHandler, built from an environment', () => {
  it.each([undefined, ''])('fails loudly with a ConfigError naming ARCHIVE_BUCKET when it is %j', (value) => {
    expect(() => handler.withEnv({ ...env, ARCHIVE_BUCKET: value })).toThrow(ConfigError);
    expect(() => handler.withEnv({ ...env, ARCHIVE_BUCKET: value })).toThrow(
      /ARCHIVE_BUCKET (is not set|must not be empty)/,
    );
  });

  it('puts one gzip JSON Lines object per day into the bucket', async () => {
    s3.on(PutObjectCommand).resolves({});

    const response = await handler.withEnv(env)(
      {
        Records: [
          ttlRemoval({ sequenceNumber: '701', oldImage: expiredItem(1) }),
          ttlRemoval({ sequenceNumber: '702', oldImage: expiredItem(2) }),
        ],
      },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    const calls = s3.commandCalls(PutObjectCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]?.args[0].input;
    expect(input).toMatchObject({
      Bucket: 'orders-archive',
      Key: 'year=2024/month=05/day=01/701.jsonl.gz',
      ContentType: 'application/x-ndjson',
      ContentEncoding: 'gzip',
    });
    const lines = gunzipSync(input?.Body as Uint8Array)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([expiredItem(1), expiredItem(2)]);
  });

  it('reports the first record of an object S3 refused', async () => {
    s3.on(PutObjectCommand).rejects(new Error('InternalError'));

    const response = await handler.withEnv(env)(
      { Records: [ttlRemoval({ sequenceNumber: '801' })] },
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '801' }] });
  });

  it('sends nothing for a batch without TTL removals', async () => {
    const response = await handler.withEnv(env)({ Records: [] }, lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
  });
});

describe('archiverStore', () => {
  it('puts archive objects into the bucket ARCHIVE_BUCKET names', async () => {
    s3.on(PutObjectCommand).resolves({});

    await archiverStore(env).put({
      key: 'year=2024/month=05/day=01/1.jsonl.gz',
      body: new Uint8Array([1]),
      firstSequenceNumber: '1',
      items: 1,
    });

    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toMatchObject({
      Bucket: 'orders-archive',
      Key: 'year=2024/month=05/day=01/1.jsonl.gz',
    });
  });
});

describe('createS3Client', () => {
  it('addresses an emulator’s buckets by path (a bucket cannot be a subdomain of an IP), and AWS’s by host', async () => {
    expect(await createS3Client({ endpoint: 'http://127.0.0.1:5000' }).config.forcePathStyle).toBe(true);
    expect(await createS3Client({ region: 'eu-west-1' }).config.forcePathStyle).toBe(false);
  });
});
