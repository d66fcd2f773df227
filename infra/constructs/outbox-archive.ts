import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ARCHIVER_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { ARCHIVE_DEFAULTS, ARCHIVER_DEFAULTS } from './defaults.ts';
import { type ReportProblem, settingsEnvironment } from './function-settings.ts';
import { OutboxFunction } from './outbox-function.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** Settings of the archive of expired messages (the `archive` prop of a `TransactionalOutbox`). */
export interface OutboxArchiveProps {
  /**
   * A bucket you created for the archive; the archiver may only put objects into it.
   * @default - a new bucket: encrypted, TLS only, public access blocked, unversioned, see `transitionAfter`
   */
  readonly bucket?: s3.IBucket;
  /**
   * When a new bucket's objects move to S3 Glacier Instant Retrieval (not with `bucket`).
   * @default Duration.days(90)
   */
  readonly transitionAfter?: Duration;
}

/** What {@link addOutboxArchive} builds from. */
export interface OutboxArchiveOptions extends OutboxArchiveProps {
  /** The outbox table, with a stream of old images. */
  readonly table: dynamodb.ITable;
  /** The archiver's handler module. */
  readonly entry: string;
  /** CloudWatch namespace of the archiver's metrics. */
  readonly metricsNamespace: string;
  /** What happens to a new bucket and the archiver's log group when they leave the stack. */
  readonly removalPolicy?: RemovalPolicy;
  /** Reports a bad prop (failing the synth). */
  readonly report: ReportProblem;
  /**
   * The outbox's customer-managed key, for a new bucket.
   * @default - SSE-S3
   */
  readonly encryptionKey?: kms.IKey;
}

/** The archive of expired messages, as {@link addOutboxArchive} built it. */
export interface OutboxArchive {
  /** Where the expired messages go. */
  readonly bucket: s3.IBucket;
  /** The archiver function. */
  readonly archiver: OutboxFunction;
  /** Its stream mapping (TTL deletions only). */
  readonly streamSource: sources.DynamoEventSource;
}

/**
 * Adds the archive of expired messages to `scope`: an S3 bucket (`ArchiveBucket`, unless one is given) and
 * the archiver (`Archiver`), which reads the outbox stream's TTL deletions and writes each expired message's
 * last image as gzip JSON Lines partitioned by day (`year=YYYY/month=MM/day=DD/<first sequence
 * number>.jsonl.gz`), so a query engine reads one day without reading the rest.
 */
export function addOutboxArchive(scope: Construct, options: OutboxArchiveOptions): OutboxArchive {
  if (options.bucket !== undefined && options.transitionAfter !== undefined) {
    options.report(
      'archive.transitionAfter applies to a new bucket only; set the lifecycle of archive.bucket yourself',
    );
  }
  const bucket = options.bucket ?? newArchiveBucket(scope, options);
  const archiver = new OutboxFunction(scope, 'Archiver', {
    timeout: ARCHIVER_DEFAULTS.timeout,
    memorySize: ARCHIVER_DEFAULTS.memorySize,
    description: 'Outbox stream TTL deletions → S3: archives expired messages as gzip JSON Lines by day',
    logGroupRemovalPolicy: options.removalPolicy,
    entry: options.entry,
    handler: 'handler',
    serviceName: 'outbox-archiver',
    metricsNamespace: options.metricsNamespace,
    environment: settingsEnvironment(
      ARCHIVER_SETTINGS,
      { archiveBucket: { value: bucket.bucketName, prop: 'archive.bucket' } },
      options.report,
    ),
  });
  markOutboxRole(archiver, OutboxResourceRole.ARCHIVER);
  // Writes objects, nothing else: no read, list, delete or ACL change on the archive.
  iam.Grant.addToPrincipal({
    grantee: archiver,
    actions: ['s3:PutObject'],
    resourceArns: [bucket.arnForObjects('*')],
  });
  // A PutObject under SSE-KMS asks for a data key with the caller's right; nothing else of the key.
  bucket.encryptionKey?.grant(archiver, 'kms:GenerateDataKey');

  const streamSource = new sources.DynamoEventSource(options.table, {
    // From the oldest record: items that expired before the mapping existed are archived too.
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: ARCHIVER_DEFAULTS.batchSize,
    maxBatchingWindow: ARCHIVER_DEFAULTS.maxBatchingWindow,
    // No retry limit or maximum age: a failing batch is retried until its records leave the stream (24 h),
    // since an expired item exists nowhere else. Halving it isolates a record that fails it.
    bisectBatchOnError: true,
    reportBatchItemFailures: true,
    filters: ARCHIVER_DEFAULTS.filters.map((pattern) => lambda.FilterCriteria.filter(pattern)),
  });
  archiver.addEventSource(streamSource);
  return { bucket, archiver, streamSource };
}

function newArchiveBucket(scope: Construct, options: OutboxArchiveOptions): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'ArchiveBucket', {
    ...(options.encryptionKey === undefined
      ? { encryption: ARCHIVE_DEFAULTS.encryption }
      : {
          encryption: s3.BucketEncryption.KMS,
          encryptionKey: options.encryptionKey,
          // One data key per bucket for a while instead of one KMS request per object.
          bucketKeyEnabled: true,
        }),
    enforceSSL: ARCHIVE_DEFAULTS.enforceSSL,
    blockPublicAccess: ARCHIVE_DEFAULTS.blockPublicAccess,
    versioned: ARCHIVE_DEFAULTS.versioned,
    // A bucket that still holds objects is not deleted with the stack, whatever the policy: emptying it
    // would take a custom-resource Lambda.
    removalPolicy: options.removalPolicy ?? RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        id: 'archive-to-glacier-instant-retrieval',
        transitions: [
          {
            storageClass: ARCHIVE_DEFAULTS.storageClass,
            transitionAfter: options.transitionAfter ?? ARCHIVE_DEFAULTS.transitionAfter,
          },
        ],
      },
    ],
  });
  markOutboxRole(bucket, OutboxResourceRole.ARCHIVE_BUCKET);
  return bucket;
}
