import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { createArchiverHandler } from '../../../shared/lambda/archiver-handler.ts';
import {
  deployedEnvironment,
  entryOf,
  environmentOf,
  functionId,
  grantsOn,
  idsOfType,
  mappingTo,
  type PolicyStatement,
  propertiesOf,
  references,
  resolvedTarget,
  resource,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  XRAY_STATEMENT,
} from '../template-queries.ts';
import { actionsOnArn, outboxService } from './outbox-service.ts';

/** What a DynamoDB stream event source needs on the stream. */
const STREAM_READ = [
  'dynamodb:DescribeStream on StreamArn',
  'dynamodb:GetRecords on StreamArn',
  'dynamodb:GetShardIterator on StreamArn',
];

/** A service whose outbox archives, and the ids of its table, bucket and archiver. */
function archived(props: Parameters<typeof outboxService>[0] = {}) {
  // Without the claim check's bucket, so every bucket of the template is the archive's.
  const service = outboxService({ archive: true, claimCheck: false, ...props });
  const json = templateOf(service.stack);
  const bucket = service.outbox.archiveBucket;
  if (bucket === undefined) throw new Error('no archive bucket');
  return {
    ...service,
    json,
    table: resolvedTarget(service.stack, service.outbox.table.tableName),
    bucket: resolvedTarget(service.stack, bucket.bucketName),
    archiver: functionId(json, 'Outbox/Archiver'),
  };
}

let service: ReturnType<typeof archived>;

beforeAll(() => {
  service = archived();
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox archive', () => {
  describe('without archive', () => {
    it('creates no bucket, archiver, mapping or alarm of it', () => {
      const plain = outboxService({ claimCheck: false });
      const json = templateOf(plain.stack);
      expect(plain.outbox.archiveBucket).toBeUndefined();
      expect(plain.outbox.archiver).toBeUndefined();
      expect(idsOfType(json, 'AWS::S3::Bucket')).toEqual([]);
      expect(idsOfType(json, 'AWS::S3::BucketPolicy')).toEqual([]);
      expect(() => functionId(json, 'Outbox/Archiver')).toThrow();
      expect(idsOfType(json, 'AWS::Lambda::EventSourceMapping')).toHaveLength(1);
      expect(Object.keys(plain.outbox.alarms).filter((name) => name.includes('Archiver'))).toEqual([]);
    });

    it('creates nothing of it with archive: false', () => {
      const json = templateOf(outboxService({ archive: false, claimCheck: false }).stack);
      expect(idsOfType(json, 'AWS::S3::Bucket')).toEqual([]);
      expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(2);
    });
  });

  describe('bucket', () => {
    it('is encrypted, unversioned, closed to the public, and moves objects to Glacier IR after 90 days', () => {
      expect(idsOfType(service.json, 'AWS::S3::Bucket')).toEqual([service.bucket]);
      const bucket = propertiesOf(service.json, service.bucket);
      expect(bucket.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(bucket.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.VersioningConfiguration).toBeUndefined();
      expect(bucket.LifecycleConfiguration).toEqual({
        Rules: [
          {
            Id: 'archive-to-glacier-instant-retrieval',
            Status: 'Enabled',
            Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 90 }],
          },
        ],
      });
    });

    it('refuses every request that is not over TLS', () => {
      const policies = idsOfType(service.json, 'AWS::S3::BucketPolicy')
        .map((id) => propertiesOf(service.json, id))
        .filter((policy) => references(policy.Bucket, service.bucket));
      const statements = policies.flatMap(
        (policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement,
      );
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    });

    it('outlives the stack by default, and follows removalPolicy', () => {
      expect(resource(service.json, service.bucket).DeletionPolicy).toBe('Retain');
      const destroyed = archived({ removalPolicy: RemovalPolicy.DESTROY });
      expect(resource(destroyed.json, destroyed.bucket).DeletionPolicy).toBe('Delete');
    });

    it('moves objects after the time it is given', () => {
      const quick = archived({ archive: { transitionAfter: Duration.days(30) } });
      const lifecycle = propertiesOf(quick.json, quick.bucket).LifecycleConfiguration as {
        Rules: { Transitions: unknown[] }[];
      };
      expect(lifecycle.Rules[0]?.Transitions).toEqual([{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }]);
    });
  });

  describe('archiver', () => {
    it('runs the shipped archiver, told its bucket, with its own service name', () => {
      expect(entryOf(service.json, service.archiver)).toBe('shared/lambda/entries/archiver.ts');
      expect(propertiesOf(service.json, service.archiver)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: 60,
        MemorySize: 512,
      });
      expect(environmentOf(service.json, service.archiver)).toMatchObject({
        ARCHIVE_BUCKET: { Ref: service.bucket },
        POWERTOOLS_SERVICE_NAME: 'outbox-archiver',
      });
      expect(service.outbox.archiver?.serviceName).toBe('outbox-archiver');
    });

    it('builds from the environment the construct gives it', () => {
      const env = deployedEnvironment(service.json, service.archiver);
      expect(() => createArchiverHandler().withEnv(env)).not.toThrow();
      expect(() => createArchiverHandler().withEnv({ ...env, ARCHIVE_BUCKET: undefined })).toThrow(
        /ARCHIVE_BUCKET/,
      );
    });

    it('reads the outbox stream from the oldest record, TTL deletions only, bisecting and reporting failures', () => {
      const mapping = mappingTo(service.json, service.archiver);
      expect(mapping).toMatchObject({
        EventSourceArn: { 'Fn::GetAtt': [service.table, 'StreamArn'] },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 1000,
        MaximumBatchingWindowInSeconds: 60,
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        FilterCriteria: {
          Filters: [
            {
              Pattern: JSON.stringify({
                eventName: ['REMOVE'],
                userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
              }),
            },
          ],
        },
      });
      // Retried until the record leaves the stream: an expired item exists nowhere else.
      expect(mapping.MaximumRetryAttempts).toBeUndefined();
      expect(mapping.MaximumRecordAgeInSeconds).toBeUndefined();
      expect(mapping.DestinationConfig).toBeUndefined();
    });

    it('leaves the relay’s mapping as it was', () => {
      const relay = mappingTo(service.json, functionId(service.json, 'Outbox/Relay'));
      expect(relay.FilterCriteria).toEqual({ Filters: [{ Pattern: '{"eventName":["INSERT"]}' }] });
    });

    it('may only put objects into the archive bucket and read the outbox stream', () => {
      const statements = roleStatements(service.json, service.archiver);
      expect(grantsOn(statements, service.table)).toEqual(STREAM_READ);
      const onBucket = statements.filter((statement) => references(statement.Resource, service.bucket));
      expect(onBucket).toEqual([
        {
          Action: 's3:PutObject',
          Effect: 'Allow',
          Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [service.bucket, 'Arn'] }, '/*']] },
        },
      ]);
      const elsewhere = statements.filter(
        (statement) =>
          !resourcesOf(statement).some(
            (target) => references(target, service.table) || references(target, service.bucket),
          ),
      );
      expect(elsewhere).toEqual([
        XRAY_STATEMENT,
        expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'] }),
        { Action: 'dynamodb:ListStreams', Effect: 'Allow', Resource: '*' },
      ]);
    });

    it('is the only function allowed anything on the archive bucket', () => {
      for (const fn of idsOfType(service.json, 'AWS::Lambda::Function')) {
        if (fn === service.archiver) continue;
        const statements: PolicyStatement[] = roleStatements(service.json, fn);
        expect(grantsOn(statements, service.bucket), fn).toEqual([]);
      }
    });

    it('alarms on its errors and throttles', () => {
      expect(Object.keys(service.outbox.alarms)).toEqual(
        expect.arrayContaining(['errors/Archiver', 'throttles/Archiver']),
      );
    });
  });

  describe('with a bucket it is given', () => {
    const BUCKET_ARN = 'arn:aws:s3:::orders-archive';

    it('creates no bucket and may only put objects into that one', () => {
      const given = outboxService({ claimCheck: false }, (stack) => ({
        archive: { bucket: s3.Bucket.fromBucketArn(stack, 'Archive', BUCKET_ARN) },
      }));
      const json = templateOf(given.stack);
      expect(idsOfType(json, 'AWS::S3::Bucket')).toEqual([]);
      const archiver = functionId(json, 'Outbox/Archiver');
      expect(environmentOf(json, archiver).ARCHIVE_BUCKET).toBe('orders-archive');
      expect(actionsOnArn(roleStatements(json, archiver), `${BUCKET_ARN}/*`)).toEqual(['s3:PutObject']);
    });

    it('refuses a transition time, which only a new bucket gets', () => {
      const given = outboxService({ claimCheck: false }, (stack) => ({
        archive: {
          bucket: s3.Bucket.fromBucketArn(stack, 'Archive', BUCKET_ARN),
          transitionAfter: Duration.days(10),
        },
      }));
      expect(() => given.app.synth()).toThrow(/archive\.transitionAfter applies to a new bucket only/);
    });
  });
});
