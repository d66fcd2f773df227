import { Duration, type Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_CHECK_PREFIX } from '../../../shared/claim-check/claim-check-reference.ts';
import { OutboxSettings } from '../../../shared/settings/outbox-settings.ts';
import { readOptionalSetting, readSetting } from '../../../shared/settings/setting.ts';
import {
  type CfnTemplate,
  deployedEnvironment,
  environmentOf,
  functionId,
  idsOfType,
  onlyId,
  type PolicyStatement,
  propertiesOf,
  references,
  renderString,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, outboxService, serviceFunction } from './outbox-service.ts';

const DAY_MS = 86_400_000;

/** A service with a writer `Writer`, a reader `Reader` and a consumer `OrderConsumer` of its outbox. */
function service(
  props: Parameters<typeof outboxService>[0] = {},
  before?: Parameters<typeof outboxService>[1],
) {
  const built = outboxService(props, before);
  built.outbox.addConsumer('OrderConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
  built.outbox.bindWriter(serviceFunction(built.stack, 'Writer'));
  built.outbox.bindReader(serviceFunction(built.stack, 'Reader'));
  return built;
}

/** The ARN of every object under the claim-check prefix of bucket `logicalId`, as `renderString` writes it. */
const objectsOf = (logicalId: string) => `<${logicalId}.Arn>/${CLAIM_CHECK_PREFIX}*`;

/** A resource with each reference written `<LogicalId>` or `<LogicalId.Attribute>`. */
const written = (target: unknown) =>
  renderString(target, {
    ref: (logicalId, attribute) =>
      attribute === undefined ? `<${logicalId}>` : `<${logicalId}.${attribute}>`,
  });

/** Every S3 action the statements allow, with the resource written out (`<Bucket.Arn>/claim-check/*`). */
function s3Grants(statements: readonly PolicyStatement[]): string[] {
  return statements
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) => {
      const actions = typeof statement.Action === 'string' ? [statement.Action] : statement.Action;
      return actions
        .filter((action) => action.startsWith('s3:'))
        .flatMap((action) => resourcesOf(statement).map((target) => `${action} on ${written(target)}`));
    })
    .sort();
}

describe('the claim check of a TransactionalOutbox (default: a new bucket)', () => {
  let json: CfnTemplate;
  let bucketId: string;
  let stack: Stack;
  let expirationDays: number;

  beforeAll(() => {
    const built = service({ retention: Duration.days(10) });
    stack = built.stack;
    json = templateOf(stack);
    bucketId = onlyId(idsOfType(json, 'AWS::S3::Bucket'), 'claim-check bucket');
    expirationDays = built.outbox.claimCheck?.expiration.toDays() ?? Number.NaN;
  }, SYNTH_TIMEOUT_MS);

  it('creates an encrypted, private, unversioned bucket that only accepts TLS', () => {
    const bucket = propertiesOf(json, bucketId);
    expect(bucket.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    expect(bucket.VersioningConfiguration).toBeUndefined();
    expect(json.Resources[bucketId]?.DeletionPolicy).toBe('Retain');
    const policy = onlyId(idsOfType(json, 'AWS::S3::BucketPolicy'), 'bucket policy');
    expect(JSON.stringify(propertiesOf(json, policy))).toContain('"aws:SecureTransport":"false"');
  });

  it('expires claim-check objects after the retention plus the longest redelivery horizon', () => {
    // The default policy's horizon: 4 days in the queue then 14 in the dead-letter queue, ten confirmation rounds
    // (≈ 45 h), their send retries (≈ 3 h) and 4 days in the queue again after a redrive; with 10 days' retention
    // and a day's margin: 10 + 24.0… → 35 + 1.
    expect(expirationDays).toBe(36);
    expect(propertiesOf(json, bucketId).LifecycleConfiguration).toEqual({
      Rules: [
        {
          Id: 'expire-claim-checks',
          Prefix: CLAIM_CHECK_PREFIX,
          Status: 'Enabled',
          ExpirationInDays: 36,
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        },
      ],
    });
    expect(expirationDays * DAY_MS).toBeGreaterThan(10 * DAY_MS + 4 * DAY_MS + 14 * DAY_MS + 4 * DAY_MS);
  });

  it('lets a writer put objects under claim-check/ only, and tells it the bucket and threshold', () => {
    const id = functionId(json, 'Writer');
    expect(s3Grants(roleStatements(json, id))).toEqual([`s3:PutObject on ${objectsOf(bucketId)}`]);
    const env = deployedEnvironment(json, id);
    expect(readSetting(env, OutboxSettings.claimCheckBucket)).toBe(`deployed-${bucketId.toLowerCase()}`);
    expect(readSetting(env, OutboxSettings.claimCheckThresholdBytes)).toBe(65_536);
  });

  it('lets a consumer get objects under claim-check/ only, and tells it the bucket', () => {
    const id = functionId(json, 'Outbox/OrderConsumer');
    expect(s3Grants(roleStatements(json, id))).toEqual([`s3:GetObject on ${objectsOf(bucketId)}`]);
    expect(readSetting(deployedEnvironment(json, id), OutboxSettings.claimCheckBucket)).toBe(
      `deployed-${bucketId.toLowerCase()}`,
    );
  });

  it('gives the relay, the sweeper and a reader nothing on the bucket: they never need the payload', () => {
    for (const name of ['Outbox/Relay', 'Outbox/Sweeper', 'Reader']) {
      const id = functionId(json, name);
      const statements = roleStatements(json, id);
      expect(
        statements.filter((statement) => references(statement.Resource, bucketId)),
        name,
      ).toEqual([]);
      expect(environmentOf(json, id)[OutboxSettings.claimCheckBucket.name], name).toBeUndefined();
    }
  });
});

describe('the claim check, configured', () => {
  it(
    'is left out with claimCheck: false — no bucket, no settings, no S3 grant',
    () => {
      const json = templateOf(service({ claimCheck: false }).stack);
      expect(idsOfType(json, 'AWS::S3::Bucket')).toEqual([]);
      const writer = functionId(json, 'Writer');
      expect(
        readOptionalSetting(deployedEnvironment(json, writer), OutboxSettings.claimCheckBucket),
      ).toBeUndefined();
      expect(s3Grants(roleStatements(json, writer))).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'uses a given bucket and threshold, and grants on its prefix',
    () => {
      const built = service({}, (stack) => ({
        claimCheck: {
          bucket: new s3.Bucket(stack, 'MyClaims', { bucketName: 'my-claims' }),
          thresholdBytes: 32_768,
        },
      }));
      const json = templateOf(built.stack);
      const bucketId = onlyId(idsOfType(json, 'AWS::S3::Bucket'), 'the given bucket');
      expect(bucketId).toMatch(/^MyClaims/);
      expect(propertiesOf(json, bucketId).LifecycleConfiguration).toBeUndefined();
      const writer = functionId(json, 'Writer');
      expect(s3Grants(roleStatements(json, writer))).toEqual([`s3:PutObject on ${objectsOf(bucketId)}`]);
      const env = deployedEnvironment(json, writer);
      expect(readSetting(env, OutboxSettings.claimCheckThresholdBytes)).toBe(32_768);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'encrypts a new bucket with the outbox’s key and lets the writer encrypt and the consumer decrypt',
    () => {
      const built = service({}, (stack) => ({ encryptionKey: new kms.Key(stack, 'Key') }));
      const json = templateOf(built.stack);
      const bucketId = onlyId(idsOfType(json, 'AWS::S3::Bucket'), 'claim-check bucket');
      expect(propertiesOf(json, bucketId).BucketEncryption).toMatchObject({
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms' }, BucketKeyEnabled: true },
        ],
      });
      const keyId = onlyId(
        idsOfType(json, 'AWS::KMS::Key').filter((id) => id.startsWith('Key')),
        'the outbox key',
      );
      const keyActions = (name: string) =>
        roleStatements(json, functionId(json, name))
          .filter((statement) => references(statement.Resource, keyId))
          .flatMap((statement) =>
            typeof statement.Action === 'string' ? [statement.Action] : statement.Action,
          );
      expect(keyActions('Writer')).toEqual(expect.arrayContaining(['kms:GenerateDataKey*']));
      expect(keyActions('Outbox/OrderConsumer')).toEqual(expect.arrayContaining(['kms:Decrypt']));
    },
    SYNTH_TIMEOUT_MS,
  );

  it.each([512, 250_000])(
    'fails synth on a threshold of %i bytes, naming the setting',
    (thresholdBytes) => {
      const built = service({ claimCheck: { thresholdBytes } });
      expect(() => templateOf(built.stack)).toThrow(
        /claimCheck\.thresholdBytes: CLAIM_CHECK_THRESHOLD_BYTES must be/,
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('the claim check bucket', () => {
  it(
    'is the only S3 bucket a default outbox adds to a stack',
    () => {
      const json = templateOf(outboxService().stack);
      expect(idsOfType(json, 'AWS::S3::Bucket')).toHaveLength(1);
    },
    SYNTH_TIMEOUT_MS,
  );
});
