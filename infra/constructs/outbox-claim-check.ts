import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../shared/claim-check/claim-check-reference.ts';
import { DEFAULT_RETENTION_DAYS } from '../../shared/outbox/outbox-defaults.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../shared/outbox/outbox-store.ts';
import { redeliveryHorizonMs } from '../../shared/outbox/redelivery-horizon.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../shared/retry/retry-policy.ts';
import {
  ADMIN_SETTINGS,
  CONSUMER_SETTINGS,
  OutboxSettings,
  WRITER_SETTINGS,
} from '../../shared/settings/outbox-settings.ts';
import type { Setting } from '../../shared/settings/setting.ts';
import { CLAIM_CHECK_DEFAULTS, QUEUE_DEFAULTS } from './defaults.ts';
import { addToEnvironment, type SettingValues, settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { acknowledgeNagFindings, iamWildcardResourceFinding } from './nag-suppressions.ts';
import type { QueueWithDlq } from './queue-with-dlq.ts';

const DAY_MS = 86_400_000;

/** Settings of the claim check (the `claimCheck` prop of a `TransactionalOutbox`). */
export interface OutboxClaimCheckProps {
  /**
   * A bucket you created for the payloads. Give it a lifecycle rule that expires `claim-check/` objects no
   * sooner than `OutboxClaimCheck.expiration` (the outbox's retention plus its redelivery horizon).
   * @default - a new bucket: encrypted, TLS only, public access blocked, unversioned, objects under
   * `claim-check/` expired after `expiration`
   */
  readonly bucket?: s3.IBucket;
  /**
   * Messages larger than this on the wire (body and attributes) keep their payload in S3 (1 KiB – 240 KiB).
   * @default 65536 (64 KiB)
   */
  readonly thresholdBytes?: number;
}

/** What an {@link OutboxClaimCheck} is built from: the props and what the outbox knows of its deliveries. */
export interface OutboxClaimCheckOptions extends OutboxClaimCheckProps {
  /** The outbox's topic queues and the topics each carries. */
  readonly queues: Readonly<Record<string, QueueWithDlq>>;
  readonly topicRoutes: ReadonlyMap<string, unknown>;
  /** The outbox's retry policies by topic. @default DEFAULT_RETRY_POLICY for every topic */
  readonly retryPolicies?: Readonly<Record<string, RetryPolicy>>;
  /**
   * The retry policy of each subscriber's deliveries, whose queues (in the subscribers' stacks) are taken to keep
   * messages as long as `QUEUE_DEFAULTS` says; a subscription whose queues keep them longer is refused at synth.
   * @default - no subscriber
   */
  readonly subscriberPolicies?: readonly RetryPolicy[];
  /** @default DEFAULT_CONFIRM_DEADLINE_MS */
  readonly confirmDeadline?: Duration;
  /** How long a terminal message stays in the outbox. @default DEFAULT_RETENTION_DAYS */
  readonly retention?: Duration;
  /**
   * The name of a new bucket, when others must find it by name (an outbox's subscribers).
   * @default - a name CloudFormation generates
   */
  readonly bucketName?: string;
  /** The outbox's customer-managed key, for a new bucket. @default - SSE-S3 */
  readonly encryptionKey?: kms.IKey;
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The S3 side of the claim check: the bucket that holds payloads too large for their queue, the settings that
 * tell writers and consumers about it, and grants on its `claim-check/` prefix only. Writers put each object
 * before their transaction; an object whose transaction failed is never referenced. Objects expire by a
 * lifecycle rule once neither the outbox nor any copy of the message in a queue can still need them — not by
 * deleting them when the message expires, which would take a third reader of the outbox stream (DynamoDB
 * allows two per shard: the relay and the archiver).
 * @example
 * const claimCheck = new OutboxClaimCheck(outbox, 'ClaimCheck', { queues, topicRoutes });
 * claimCheck.bindWriter(createOrder);
 */
export class OutboxClaimCheck extends Construct {
  /** Where the payloads are. */
  public readonly bucket: s3.IBucket;
  /** Messages larger than this on the wire go through S3. */
  public readonly thresholdBytes: number;
  /**
   * How long a payload must be kept: the outbox's retention plus the longest redelivery horizon of its topics
   * (and a day's margin). A new bucket expires `claim-check/` objects after it.
   */
  public readonly expiration: Duration;

  readonly #problems: string[] = [];

  constructor(scope: Construct, id: string, options: OutboxClaimCheckOptions) {
    super(scope, id);
    this.node.addValidation({ validate: () => this.#problems });
    this.thresholdBytes = options.thresholdBytes ?? OutboxSettings.claimCheckThresholdBytes.defaultValue ?? 0;
    this.#check(
      () => OutboxSettings.claimCheckThresholdBytes.validate(this.thresholdBytes),
      'thresholdBytes',
    );
    this.expiration = Duration.days(expirationDays(options));
    this.bucket = options.bucket ?? this.#newBucket(options);
  }

  /**
   * Lets `fn` claim-check the payloads it writes with `writeWithOutbox`: sets CLAIM_CHECK_BUCKET and
   * CLAIM_CHECK_THRESHOLD_BYTES (read by `outboxWriterFromEnv`) and allows s3:PutObject under `claim-check/`.
   */
  bindWriter(fn: lambda.Function): void {
    this.#addSettings(fn, WRITER_SETTINGS, {
      claimCheckThresholdBytes: { value: this.thresholdBytes, prop: 'thresholdBytes' },
    });
    this.#grant(fn, 's3:PutObject');
    grantKeyUse(this.bucket.encryptionKey, fn, 'write');
  }

  /**
   * Lets consumer `fn` read claim-checked payloads (`createConsumerHandler` does so itself): sets
   * CLAIM_CHECK_BUCKET and allows s3:GetObject under `claim-check/`.
   */
  bindConsumer(fn: lambda.Function): void {
    this.#addSettings(fn, CONSUMER_SETTINGS);
    this.#grant(fn, 's3:GetObject');
    grantKeyUse(this.bucket.encryptionKey, fn, 'read');
  }

  /**
   * Lets the admin function `fn` erase claim-checked payloads with their messages: sets CLAIM_CHECK_BUCKET and
   * allows s3:DeleteObject under `claim-check/`. With a key, nothing more: deleting reads no data.
   */
  bindEraser(fn: lambda.Function): void {
    this.#addSettings(fn, ADMIN_SETTINGS);
    this.#grant(fn, 's3:DeleteObject');
  }

  #grant(fn: lambda.Function, action: string): void {
    const objects = this.bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`);
    iam.Grant.addToPrincipal({ grantee: fn, actions: [action], resourceArns: [objects] });
    acknowledgeNagFindings(fn, [
      {
        id: iamWildcardResourceFinding(fn, objects),
        reason:
          `Claim-checked payloads are keyed claim-check/<messageId>/<sha256>.json, so the resource is every ` +
          `object under that prefix of the one claim-check bucket; the only action is ${action}.`,
      },
    ]);
  }

  /** Adds the claim check's settings that `fn` reads (`settings`): the bucket's name, and `values`. */
  #addSettings(fn: lambda.Function, settings: readonly Setting<unknown>[], values: SettingValues = {}): void {
    addToEnvironment(
      fn,
      settingsEnvironment(
        settings,
        { claimCheckBucket: { value: this.bucket.bucketName, prop: 'bucket' }, ...values },
        (problem) => this.#problems.push(`TransactionalOutbox: claimCheck.${problem}`),
      ),
    );
  }

  #newBucket(options: OutboxClaimCheckOptions): s3.Bucket {
    const bucket = new s3.Bucket(this, 'Bucket', {
      ...(options.bucketName === undefined ? {} : { bucketName: options.bucketName }),
      ...(options.encryptionKey === undefined
        ? { encryption: CLAIM_CHECK_DEFAULTS.encryption }
        : {
            encryption: s3.BucketEncryption.KMS,
            encryptionKey: options.encryptionKey,
            // One data key per bucket for a while instead of one KMS request per object.
            bucketKeyEnabled: true,
          }),
      enforceSSL: CLAIM_CHECK_DEFAULTS.enforceSSL,
      blockPublicAccess: CLAIM_CHECK_DEFAULTS.blockPublicAccess,
      objectOwnership: CLAIM_CHECK_DEFAULTS.objectOwnership,
      versioned: CLAIM_CHECK_DEFAULTS.versioned,
      // Payloads of undelivered messages are the only copy: a bucket is not deleted with the stack by default
      // (and never while it holds objects, whatever the policy).
      removalPolicy: options.removalPolicy ?? RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'expire-claim-checks',
          prefix: CLAIM_CHECK_PREFIX,
          // Covers both an object whose transaction never committed and one whose message has expired.
          expiration: this.expiration,
          abortIncompleteMultipartUploadAfter: CLAIM_CHECK_DEFAULTS.abortIncompleteMultipartUploadAfter,
        },
      ],
    });
    acknowledgeNagFindings(bucket, [
      {
        id: 'AwsSolutions-S1',
        reason:
          'Holds claim-checked payloads for their delivery only; every put and get is made by the outbox’s ' +
          'writers and consumers under their own roles, which CloudTrail data events record when an account ' +
          'enables them. Pass your own bucket (claimCheck.bucket) to log it your way.',
      },
    ]);
    return bucket;
  }

  /** The result of `check`, or `undefined` with its error recorded as a synth problem of `prop`. */
  #check<T>(check: () => T, prop: string): T | undefined {
    try {
      return check();
    } catch (error) {
      this.#problems.push(
        `TransactionalOutbox: claimCheck.${prop}: ${error instanceof Error ? error.message : String(error)}`,
      );
      return undefined;
    }
  }
}

/**
 * Whole days a payload must be kept: a message can be delivered up to its topic's redelivery horizon after it
 * was written (the last reconciliation round, its send retries, then the queue's or dead-letter queue's
 * retention), and an outbox item is kept `retention` after that; the payload outlives both.
 */
export function expirationDays(options: OutboxClaimCheckOptions): number {
  const retentionMs = known(options.retention)?.toMilliseconds() ?? DEFAULT_RETENTION_DAYS * DAY_MS;
  const confirmDeadlineMs =
    known(options.confirmDeadline)?.toMilliseconds({ integral: false }) ?? DEFAULT_CONFIRM_DEADLINE_MS;
  let horizonMs = 0;
  for (const queue of Object.values(options.queues)) {
    const queueRetentionMs = queue.settings.retentionPeriod.toMilliseconds();
    const deadLetterRetentionMs = queue.settings.deadLetterRetention.toMilliseconds();
    for (const [topic, routed] of options.topicRoutes) {
      if (routed !== queue.queue) continue;
      const policy = options.retryPolicies?.[topic] ?? DEFAULT_RETRY_POLICY;
      horizonMs = Math.max(
        horizonMs,
        redeliveryHorizonMs({ policy, confirmDeadlineMs, queueRetentionMs, deadLetterRetentionMs }),
      );
    }
  }
  for (const policy of options.subscriberPolicies ?? []) {
    horizonMs = Math.max(
      horizonMs,
      redeliveryHorizonMs({
        policy,
        confirmDeadlineMs,
        queueRetentionMs: QUEUE_DEFAULTS.retentionPeriod.toMilliseconds(),
        deadLetterRetentionMs: QUEUE_DEFAULTS.deadLetterRetention.toMilliseconds(),
      }),
    );
  }
  return Math.ceil((retentionMs + horizonMs) / DAY_MS) + CLAIM_CHECK_DEFAULTS.expirationMarginDays;
}

/** A duration known at synth; an unresolved one the outbox reports itself. */
function known(duration: Duration | undefined): Duration | undefined {
  return duration === undefined || duration.isUnresolved() ? undefined : duration;
}
