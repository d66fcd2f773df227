/**
 * The cdk-nag findings that resources of the outbox have by design, each with its reason, in one place.
 *
 * They are recorded with CDK's own `Validations.of(construct).acknowledge({ id, reason })` (aws-cdk-lib), which
 * is what cdk-nag v3 reads: a rule pack skips a finding acknowledged on the resource or on any construct above
 * it. So a user who runs `Validations.of(app).addPlugins(new AwsSolutionsChecks(app))` on a stack with a
 * `TransactionalOutbox` sees the outbox's own findings acknowledged with these reasons, and the package does not
 * depend on cdk-nag. (cdk-nag v3 no longer reads the v2 `cdk_nag.rules_to_suppress` template metadata; it only
 * writes it, with `writeSuppressionsToCloudFormation`.) A finding of a rule that reports several per resource
 * is acknowledged exactly, as `Rule[Finding]`, e.g. `AwsSolutions-IAM5[Resource::*]`.
 *
 * Everything else cdk-nag flagged was fixed instead: the newest Node.js runtime (AwsSolutions-L1), point-in-time
 * recovery on every table, TLS-only encrypted queues, topic and bucket, log groups with a retention, X-Ray on
 * every function, explicit memory and timeouts.
 */
import * as core from 'aws-cdk-lib';
import { Aspects, CfnResource, type IAspect, Stack } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { OUTBOX_ROLE_METADATA, OutboxResourceRole } from './template-metadata.ts';

/**
 * What {@link acknowledgeOutboxNagFindings} reads of a `TransactionalOutbox` (which this module does not import:
 * the outbox imports it).
 */
export interface OutboxNagSubject extends IConstruct {
  readonly encryptionKey: kms.IKey | undefined;
  readonly sweeperSchedule: IConstruct;
  readonly failureQueue: IConstruct;
  readonly archiveBucket: s3.IBucket | undefined;
  readonly archiver: lambda.Function | undefined;
  readonly adminApi: { readonly methods: readonly IConstruct[] } | undefined;
}

/** A cdk-nag finding acknowledged on a resource: the rule (with the finding, for per-finding rules) and why. */
export interface NagAcknowledgement {
  /** The rule id as cdk-nag reports it: `AwsSolutions-SQS3`, `AwsSolutions-IAM5[Resource::*]`. */
  readonly id: string;
  /** Why the resource is right as it is. */
  readonly reason: string;
}

/** Every finding the outbox acknowledges, by what it is about. */
export const OUTBOX_NAG_REASONS = {
  /** On every function the outbox builds (its role's default policy). */
  xrayAnyResource: {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level ' +
      'permissions, so IAM only accepts Resource "*" for them. Every other statement names its table, index, ' +
      'queue or bucket.',
  },
  /** On every function that writes data a customer-managed key protects (the `encryptionKey` prop). */
  keyGenerateDataKey: {
    id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
    reason:
      'Writing to a table, queue or bucket encrypted with the customer-managed key makes the service ask for a ' +
      "data key with the caller's rights; the wildcard covers only the GenerateDataKey variants (with and " +
      'without plaintext), on that one key: the key actions Table.grantWriteData grants.',
  },
  /** On the relay and the archiver, both invoked by a DynamoDB stream mapping. */
  streamFunctionDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      'Invoked synchronously by a DynamoDB stream mapping, never asynchronously, so a function dead-letter ' +
      "queue would never receive anything. The relay's mapping sends the batches it gives up on to the " +
      'relay failure queue (its on-failure destination); the archiver retries until the records leave the stream.',
  },
  /** On the archiver's stream mapping. */
  archiverMappingDestination: {
    id: 'Serverless-LambdaEventSourceMappingDestination',
    reason:
      'An on-failure destination would receive only the shard and sequence-number range of a batch, not the ' +
      'expired items, and would need the mapping to give up early. Instead a failing batch is retried until ' +
      "its records leave the stream (24 h), the archiver's errors alarm fires on the first failure, and the " +
      "items stay recoverable from the outbox table's point-in-time backups.",
  },
  /** On each consumer, invoked by its SQS mapping. */
  queueFunctionDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      "Invoked synchronously by the SQS mapping of its topic queue: a message that fails is retried by SQS and, after maxReceiveCount receives, moved to the queue's own dead-letter queue by its redrive policy. A function DLQ only receives asynchronous invocations.",
  },
  /** On each consumer's SQS mapping. */
  queueMappingDestination: {
    id: 'Serverless-LambdaEventSourceMappingDestination',
    reason:
      'Lambda supports on-failure destinations only for stream and Kafka sources, not for SQS: the ' +
      "topic queue's redrive policy (to its dead-letter queue, with an alarm on it) is where failed messages go.",
  },
  /** On the receipts function, invoked by the SQS mapping of the receipt queue. */
  receiptsFunctionDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      "Invoked synchronously by the SQS mapping of the receipt queue: a receipt that fails to apply is retried by SQS and, after maxReceiveCount receives, moved to the receipt queue's own dead-letter queue (alarmed). A function DLQ only receives asynchronous invocations.",
  },
  /** On the receipts function's SQS mapping. */
  receiptsMappingDestination: {
    id: 'Serverless-LambdaEventSourceMappingDestination',
    reason:
      'Lambda supports on-failure destinations only for stream and Kafka sources, not for SQS: the receipt ' +
      "queue's redrive policy (to its dead-letter queue, with an alarm on it) is where failed receipts go.",
  },
  /** On the admin function, invoked by API Gateway. */
  apiFunctionDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      'Invoked synchronously by API Gateway: the caller gets the error, and a function DLQ only receives ' +
      'asynchronous invocations.',
  },
  /** On the sweeper, invoked asynchronously by its EventBridge schedule. */
  sweeperDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      'The sweeper is invoked asynchronously by its schedule with an empty scheduled event: it reads its work ' +
      'from the outbox table, not from the event, so a failed event holds nothing to redrive, and the next run ' +
      "(one minute later by default) does the same work. A failure raises the sweeper's errors alarm instead.",
  },
  /** On the sweeper's EventBridge rule. */
  sweeperScheduleDlq: {
    id: 'Serverless-EventBusDLQ',
    reason:
      'The rule only delivers clock ticks: a tick EventBridge cannot deliver (after 2 retries within 5 minutes) ' +
      'is superseded by the next one, and a dead-letter queue of ticks would hold nothing to redrive. ' +
      "Throttled or failed runs raise the sweeper's throttles and errors alarms.",
  },
  /** On the relay failure queue: the relay mapping's on-failure destination. */
  failureQueueHasNoDlq: {
    id: 'AwsSolutions-SQS3',
    reason:
      "It is itself a dead-letter destination: the relay's stream mapping sends the metadata of batches it gave " +
      'up on here. No function consumes it, so no message is received repeatedly; an operator reads it (alarmed ' +
      'on its first message) and it keeps records for the SQS maximum of 14 days.',
  },
  /** On the relay failure queue. */
  failureQueueRedrive: {
    id: 'Serverless-SQSRedrivePolicy',
    reason:
      "It is the relay mapping's on-failure destination, read only by operators: a redrive policy would move its " +
      'records to yet another queue without anyone having processed them.',
  },
  /** On each topic queue's dead-letter queue. */
  deadLetterQueueRedrive: {
    id: 'Serverless-SQSRedrivePolicy',
    reason:
      'It is the dead-letter queue of a topic queue: messages here are redriven to the topic queue by an ' +
      'operator (alarmed on the first one), never consumed, so a dead-letter queue of its own would never be used.',
  },
  /** On the archive bucket the outbox creates. */
  archiveAccessLogs: {
    id: 'AwsSolutions-S1',
    reason:
      "Only the archiver's role writes objects (PutObject, nothing else), and each write is in its logs and " +
      'metrics. Reads are audited by CloudTrail data events, which an account enables once for all its buckets; ' +
      'server access logging is best-effort delivery and would need a second bucket per outbox. Pass your own ' +
      'bucket (archive.bucket) to log it your way.',
  },
  /**
   * On the archiver's role, for s3:PutObject on the archive's objects (the finding names the bucket's logical id,
   * so its id is computed with {@link iamWildcardResourceFinding}).
   */
  archiveObjects: {
    reason:
      'The archiver writes one object per batch under a key it names at run time (year=/month=/day=/<sequence ' +
      'number>.jsonl.gz), so the resource is every object of the one archive bucket; the only action is ' +
      's3:PutObject (no read, list, delete or ACL change).',
  },
  /** On the admin API's methods. */
  adminApiIamAuthorization: {
    id: 'AwsSolutions-COG4',
    reason:
      'The admin routes are AWS_IAM-authorised (SigV4): their callers are operators and tools with IAM ' +
      "identities, who need execute-api:Invoke on them, and the audit trail records the caller's IAM ARN. A " +
      'Cognito user pool would be a second identity store for the same people.',
  },
} as const;

/**
 * Acknowledges cdk-nag findings on `scope` and everything below it, with their reasons (through aws-cdk-lib's
 * `Validations`, so without depending on cdk-nag). On a function they also cover its execution role, which
 * need not be below it in the construct tree and is where the IAM findings are.
 * @example
 * acknowledgeNagFindings(outbox.failureQueue, [OUTBOX_NAG_REASONS.failureQueueHasNoDlq]);
 */
export function acknowledgeNagFindings(
  scope: IConstruct,
  acknowledgements: readonly NagAcknowledgement[],
): void {
  // Read through the namespace: aws-cdk-lib releases older than the peer range's newest lack `Validations`, and
  // cdk-nag v3, the only reader of acknowledgements, requires a release that has it (2.257 or later).
  const validations = (core as Partial<typeof core>).Validations;
  if (validations === undefined || acknowledgements.length === 0) return;
  const role = scope instanceof lambda.Function ? scope.role : undefined;
  for (const target of role === undefined ? [scope] : [scope, role]) {
    validations.of(target).acknowledge(...acknowledgements);
  }
}

/**
 * The cdk-nag id of an `AwsSolutions-IAM5` finding on a wildcard resource, written as cdk-nag writes it:
 * `GetAtt`s as `<LogicalId.Attribute>`, `Ref`s as `<LogicalId>`, joins joined.
 * @example
 * iamWildcardResourceFinding(archiver, bucket.arnForObjects('*')); // 'AwsSolutions-IAM5[Resource::<Bucket83908E77.Arn>/*]'
 */
export function iamWildcardResourceFinding(scope: IConstruct, arn: string): string {
  return `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(scope).resolve(arn))}]`;
}

/**
 * Acknowledges, when the app is synthesized, the findings of every resource `outbox` built — those added
 * later by `addConsumer`, `addAdminApi` and `archive` included — with the reasons of {@link OUTBOX_NAG_REASONS}.
 * Functions are told apart by the role the outbox records in their metadata.
 */
export function acknowledgeOutboxNagFindings(outbox: OutboxNagSubject): void {
  const aspect: IAspect = {
    visit: (node) => {
      if (node === outbox) acknowledgeOutbox(outbox);
    },
  };
  Aspects.of(outbox).add(aspect);
}

/** What each of the outbox's functions acknowledges besides X-Ray, by its role. */
const FUNCTION_ACKNOWLEDGEMENTS: Readonly<Record<string, readonly NagAcknowledgement[]>> = {
  [OutboxResourceRole.RELAY]: [OUTBOX_NAG_REASONS.streamFunctionDlq],
  [OutboxResourceRole.ARCHIVER]: [
    OUTBOX_NAG_REASONS.streamFunctionDlq,
    OUTBOX_NAG_REASONS.archiverMappingDestination,
  ],
  [OutboxResourceRole.SWEEPER]: [OUTBOX_NAG_REASONS.sweeperDlq],
  [OutboxResourceRole.CONSUMER]: [
    OUTBOX_NAG_REASONS.queueFunctionDlq,
    OUTBOX_NAG_REASONS.queueMappingDestination,
  ],
  [OutboxResourceRole.ADMIN]: [OUTBOX_NAG_REASONS.apiFunctionDlq],
  [OutboxResourceRole.RECEIPTS]: [
    OUTBOX_NAG_REASONS.receiptsFunctionDlq,
    OUTBOX_NAG_REASONS.receiptsMappingDestination,
  ],
};

function acknowledgeOutbox(outbox: OutboxNagSubject): void {
  // Every function of the outbox writes something the outbox's key (when it has one) encrypts.
  const keyed = outbox.encryptionKey === undefined ? [] : [OUTBOX_NAG_REASONS.keyGenerateDataKey];
  for (const fn of outbox.node.findAll().filter((child) => child instanceof lambda.Function)) {
    const role = roleOf(fn);
    const byRole = role === undefined ? undefined : FUNCTION_ACKNOWLEDGEMENTS[role];
    if (byRole === undefined) continue;
    acknowledgeNagFindings(fn, [OUTBOX_NAG_REASONS.xrayAnyResource, ...keyed, ...byRole]);
  }
  acknowledgeNagFindings(outbox.sweeperSchedule, [OUTBOX_NAG_REASONS.sweeperScheduleDlq]);
  acknowledgeNagFindings(outbox.failureQueue, [
    OUTBOX_NAG_REASONS.failureQueueHasNoDlq,
    OUTBOX_NAG_REASONS.failureQueueRedrive,
  ]);
  const { archiveBucket, archiver } = outbox;
  // Only a bucket the outbox created: a bucket passed in is the user's to configure and to justify.
  if (archiveBucket !== undefined && archiveBucket.node.scope === outbox) {
    acknowledgeNagFindings(archiveBucket, [OUTBOX_NAG_REASONS.archiveAccessLogs]);
  }
  if (archiveBucket !== undefined && archiver !== undefined) {
    acknowledgeNagFindings(archiver, [
      {
        id: iamWildcardResourceFinding(archiver, archiveBucket.arnForObjects('*')),
        reason: OUTBOX_NAG_REASONS.archiveObjects.reason,
      },
    ]);
  }
  for (const method of outbox.adminApi?.methods ?? []) {
    acknowledgeNagFindings(method, [OUTBOX_NAG_REASONS.adminApiIamAuthorization]);
  }
}

/** The outbox role recorded on a construct's CloudFormation resource, if any. */
function roleOf(construct: IConstruct): string | undefined {
  const resource = construct.node.defaultChild;
  if (resource === undefined || !CfnResource.isCfnResource(resource)) return undefined;
  const role: unknown = resource.getMetadata(OUTBOX_ROLE_METADATA);
  return typeof role === 'string' ? role : undefined;
}

/** A resolved CloudFormation value as cdk-nag flattens it into a finding id. */
function flattenReference(value: unknown): string {
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const join = record['Fn::Join'];
  if (Array.isArray(join)) {
    const [delimiter, parts] = join as [string, unknown[]];
    return parts.map(flattenReference).join(delimiter);
  }
  if (record['Fn::Sub'] !== undefined) return flattenReference(record['Fn::Sub']);
  const getAtt = record['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return `<${flattenReference(getAtt[0])}.${flattenReference(getAtt[1])}>`;
  if (record['Fn::ImportValue'] !== undefined) return flattenReference(record['Fn::ImportValue']);
  if (record.Ref !== undefined) return `<${flattenReference(record.Ref)}>`;
  return JSON.stringify(value);
}
