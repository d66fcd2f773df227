import { type RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../shared/claim-check/claim-check-reference.ts';
import { CONTROL_TOPICS } from '../../shared/message/control-topics.ts';
import { topicSchema } from '../../shared/message/envelope.ts';
import { redeliveryHorizonMs } from '../../shared/outbox/redelivery-horizon.ts';
import { subscriberNameSchema } from '../../shared/receipts/receipt.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../shared/retry/retry-policy.ts';
import { METRICS_DEFAULTS } from './defaults.ts';
import type { ReportProblem, SettingValues } from './function-settings.ts';
import { grantKeyUse, KEY_ACTIONS } from './key-grants.ts';
import {
  acknowledgeNagFindings,
  iamWildcardResourceFinding,
  OUTBOX_NAG_REASONS,
} from './nag-suppressions.ts';
import type { OutboxAlarmThresholds } from './outbox-alarm-thresholds.ts';
import { newConsumerFunction } from './outbox-consumer.ts';
import type { OutboxFunction } from './outbox-function.ts';
import { newMonitoring } from './outbox-monitoring.ts';
import type { OutboxScope } from './outbox-scope.ts';
import type { OutboxSubscriptionSpec } from './outbox-subscription-spec.ts';
import { newAuditTable } from './outbox-tables.ts';
import { QueueWithDlq, type QueueWithDlqProps } from './queue-with-dlq.ts';
import { rolesUnderPathStatement } from './subscriber-grants.ts';
import {
  OUTBOX_NAME_PATTERN,
  queueArnOf,
  queueUrlOf,
  receiptQueueName,
  senderRolePath,
  subscriberQueueName,
  subscriberRolePath,
} from './subscription-names.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';
import type { OutboxConsumerFunctionProps } from './transactional-outbox-props.ts';

const DAY_MS = 86_400_000;

/** Props of an {@link OutboxSubscription}: where the deliveries come from, and the consumer that applies them. */
export interface OutboxSubscriptionProps extends OutboxConsumerFunctionProps {
  /**
   * What the producer's outbox gives this subscriber: `producerOutbox.subscriptionSpec('<subscriber>')` in the same
   * app, or the same values written out (see `OutboxSubscriptionSpec`).
   */
  readonly spec: OutboxSubscriptionSpec;
  /**
   * Settings of the subscriber's queue and its dead-letter queue. Its name and FIFO-ness come from the spec (the
   * producer sends to that name).
   * @default - QUEUE_DEFAULTS
   */
  readonly queueProps?: Omit<QueueWithDlqProps, 'fifo' | 'queueName' | 'encryptionKey'>;
  /**
   * A customer-managed key of the subscriber's for its queue, dead-letter queue and inbox table. Its policy gets a
   * statement that lets the producer's senders use it (when this stack owns the key); tell the producer its ARN
   * (`subscribers.<name>.queueKeyArn`) so that its senders are granted it.
   * @default - SSE-SQS for the queues, an AWS-owned key for the inbox
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * CloudWatch namespace of the consumer's metrics, which its alarms and dashboard read.
   * @default 'ServerlessOutbox'
   */
  readonly metricsNamespace?: string;
  /** @default - a new topic encrypted with a new KMS key */
  readonly alarmTopic?: sns.ITopic;
  /** @default - ALARM_DEFAULTS */
  readonly alarmThresholds?: OutboxAlarmThresholds;
  /** @default - `<deployed stack name>-<construct path in kebab case>` */
  readonly dashboardName?: string;
  /**
   * Props merged over the defaults of the subscription's audit table (operators' redrives of its dead letters, and
   * the journal that keeps an interrupted redrive from sending a message twice). The key cannot be changed.
   * @default - the defaults (on demand, PITR, no TTL)
   */
  readonly auditTableProps?: Partial<dynamodb.TableProps>;
  /**
   * What happens to the inbox and audit tables, the log group and the alarm topic's key when they leave the stack.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A subscriber's side of a producer's outbox, in the subscriber's own stack (and account, if it has its own): its
 * queue (named as the producer derives it, `<outbox name>-<subscriber>`, with a policy that lets exactly the
 * producer's senders send to it) and dead-letter queue, its inbox, its consumer — which applies each delivery once,
 * its inbox rows keyed per subscriber, and confirms it by a receipt sent to the producer's receipt queue — and its
 * alarms and dashboard. It holds no grant on any table of the producer's, and the producer none on its own: only
 * messages cross, each way. Deploy the producer's stack first.
 * @example
 * const subscription = new OutboxSubscription(this, 'OrderEvents', {
 *   spec: orders.outbox.subscriptionSpec('inventory'),
 *   entry: 'functions/inventory/apply-order/handler.ts',
 *   functionProps: { environment: { INVENTORY_TABLE: inventory.tableName } },
 * });
 * inventory.grant(subscription.function, 'dynamodb:UpdateItem');
 */
export class OutboxSubscription extends Construct {
  /** The subscriber's name, as the producer declared it. */
  public readonly subscriber: string;
  /** The subscriber's queue (`<outbox name>-<subscriber>`) and its dead-letter queue. */
  public readonly queue: QueueWithDlq;
  /** The consumer that applies each delivery once and sends its receipt. */
  public readonly function: OutboxFunction;
  /** The consumer's inbox: its dedupe rows (keyed per subscriber), cursors and parked messages. */
  public readonly inboxTable: dynamodb.ITable;
  /**
   * The audit trail of operators' actions on the subscription (`outbox redrive --stack <this stack>`) and the redrive
   * journal. No function is granted it: operators write it with their own rights.
   */
  public readonly auditTable: dynamodb.Table;
  /** The topic every alarm of the subscription notifies. */
  public readonly alarmTopic: sns.ITopic;
  /**
   * The alarms by name: `deadLetters/<subscriber>`, `queueAge/<subscriber>` (`alarmThresholds.queueMessageAge`),
   * `errors/Consumer`, `throttles/Consumer`.
   */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The subscription's dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;

  readonly #problems: string[] = [];

  constructor(scope: Construct, id: string, props: OutboxSubscriptionProps) {
    super(scope, id);
    this.node.addValidation({ validate: () => [...new Set(this.#problems)] });
    const report: ReportProblem = (problem) => this.#problems.push(`OutboxSubscription: ${problem}`);
    const { spec } = props;
    this.subscriber = spec.subscriber;
    checkSpec(this, spec, report);
    const producer = { account: spec.producerAccount, region: spec.producerRegion };
    const parts: OutboxScope = {
      scope: this,
      report,
      metricsNamespace: props.metricsNamespace ?? METRICS_DEFAULTS.namespace,
      removalPolicy: props.removalPolicy,
      encryptionKey: props.encryptionKey,
      settings: {},
    };

    this.queue = new QueueWithDlq(this, 'Queue', {
      ...props.queueProps,
      queueName: subscriberQueueName(spec.outboxName, spec.subscriber, spec.fifo),
      fifo: spec.fifo,
      ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
    });
    markOutboxRole(this.queue.queue, OutboxResourceRole.SUBSCRIBER_QUEUE, {
      topics: spec.topics,
      subscriber: spec.subscriber,
      outboxName: spec.outboxName,
    });
    markOutboxRole(this.queue.deadLetterQueue, OutboxResourceRole.SUBSCRIBER_DEAD_LETTER_QUEUE, {
      source: this.queue.queue,
      subscriber: spec.subscriber,
    });
    // Only the producer's relay and sweeper send here: the roles under its senders' path, in its account.
    const senders = { account: producer.account, path: senderRolePath(spec.outboxName) };
    this.queue.queue.addToResourcePolicy(
      rolesUnderPathStatement(senders, {
        actions: ['sqs:SendMessage'],
        resources: [this.queue.queue.queueArn],
      }),
    );
    props.encryptionKey?.addToResourcePolicy(
      rolesUnderPathStatement(senders, { actions: KEY_ACTIONS.write, resources: ['*'] }),
    );

    this.auditTable = newAuditTable(parts, props.auditTableProps ?? {});

    const monitoring = newMonitoring(parts, props);
    monitoring.watchDeadLetters(spec.subscriber, this.queue.deadLetterQueue);
    monitoring.watchQueueAge(spec.subscriber, this.queue.queue);
    this.alarmTopic = monitoring.alarmTopic;
    this.alarms = monitoring.alarms;
    this.dashboard = monitoring.dashboard;

    const receiptQueue = receiptQueueName(spec.outboxName);
    const confirmation: SettingValues = {
      receiptQueueUrl: { value: queueUrlOf(receiptQueue, producer), prop: 'spec.outboxName' },
      subscriber: { value: spec.subscriber, prop: 'spec.subscriber' },
      ...(spec.claimCheckBucketName === undefined
        ? {}
        : { claimCheckBucket: { value: spec.claimCheckBucketName, prop: 'spec.claimCheckBucketName' } }),
    };
    const consumer = newConsumerFunction(
      parts,
      { ...props, id: 'Consumer' },
      {
        queue: this.queue,
        topics: spec.topics,
        queueProp: 'queueProps',
        queueLabel: `subscriber '${spec.subscriber}''s queue`,
        orderedTopics: spec.orderedTopics,
        monitoring,
        retryPolicyFor: (topic) => retryPolicyOf(spec, topic),
        // The outbox's own messages (erase, skip) come on the same queue: their copies too must meet an inbox row.
        horizonTopics: [...spec.topics, ...CONTROL_TOPICS],
        confirmDeadlineMs: spec.confirmDeadlineMs,
        confirmation,
        subscriber: spec.subscriber,
        // The producer's receipt queue allows the roles under this path, and its claim-check bucket and key.
        rolePath: subscriberRolePath(spec.outboxName, spec.subscriber),
      },
    );
    this.function = consumer.function;
    this.inboxTable = consumer.inboxTable;
    // Receipts: SendMessage on the producer's receipt queue (and its key's use), nothing on any producer table.
    iam.Grant.addToPrincipal({
      grantee: this.function,
      actions: ['sqs:SendMessage'],
      resourceArns: [queueArnOf(receiptQueue, producer)],
    });
    if (spec.keyArn !== undefined) {
      iam.Grant.addToPrincipal({
        grantee: this.function,
        actions: [...KEY_ACTIONS.write],
        resourceArns: [spec.keyArn],
      });
    }
    if (spec.claimCheckBucketName !== undefined) {
      grantClaimCheckReads(this.function, spec.claimCheckBucketName);
      checkClaimCheckExpiration(this, spec, report);
    }
    // Receives from its queue, writes its inbox and dead-letters itself under its own key.
    grantKeyUse(props.encryptionKey, this.function, 'write');
    const keyed = props.encryptionKey !== undefined || spec.keyArn !== undefined;
    acknowledgeNagFindings(this.function, [
      OUTBOX_NAG_REASONS.xrayAnyResource,
      ...(keyed ? [OUTBOX_NAG_REASONS.keyGenerateDataKey] : []),
      OUTBOX_NAG_REASONS.queueFunctionDlq,
      OUTBOX_NAG_REASONS.queueMappingDestination,
    ]);
  }
}

/** The retry policy of `topic`'s deliveries to the subscriber, as the producer declared it. */
function retryPolicyOf(spec: OutboxSubscriptionSpec, topic: string): RetryPolicy {
  return Object.hasOwn(spec.retryPolicies, topic)
    ? (spec.retryPolicies[topic] ?? DEFAULT_RETRY_POLICY)
    : DEFAULT_RETRY_POLICY;
}

/** `s3:GetObject` under `claim-check/` of the producer's bucket, as a consumer reads claim-checked payloads. */
function grantClaimCheckReads(fn: OutboxFunction, bucketName: string): void {
  const objects = `arn:${Stack.of(fn).partition}:s3:::${bucketName}/${CLAIM_CHECK_PREFIX}*`;
  iam.Grant.addToPrincipal({ grantee: fn, actions: ['s3:GetObject'], resourceArns: [objects] });
  acknowledgeNagFindings(fn, [
    {
      id: iamWildcardResourceFinding(fn, objects),
      reason:
        "Claim-checked payloads are keyed claim-check/<messageId>/<sha256>.json in the producer's bucket, so the " +
        'resource is every object under that prefix of that one bucket; the only action is s3:GetObject.',
    },
  ]);
}

/** The spec's values are what the producer could have written: names, topics, and this stack's place. */
function checkSpec(scope: Construct, spec: OutboxSubscriptionSpec, report: ReportProblem): void {
  if (!OUTBOX_NAME_PATTERN.test(spec.outboxName)) {
    report(`spec.outboxName must be 1–34 letters, digits, - or _, got '${spec.outboxName}'`);
  }
  if (!subscriberNameSchema.safeParse(spec.subscriber).success) {
    report(
      `spec.subscriber must be a lowercase name of at most 40 letters, digits and -, got '${spec.subscriber}'`,
    );
  }
  if (spec.topics.length === 0) report('spec.topics is empty: the subscription would receive nothing');
  for (const topic of spec.topics) {
    if (!topicSchema.safeParse(topic).success) report(`spec.topics: '${topic}' is not dotted lowercase`);
  }
  const stack = Stack.of(scope);
  const mismatch = (what: string, declared: string | undefined, actual: string) =>
    declared !== undefined && !Token.isUnresolved(actual) && declared !== actual
      ? [
          `the producer declared subscriber '${spec.subscriber}' in ${what} ${declared}, and this stack is in ${actual}`,
        ]
      : [];
  for (const problem of [
    ...mismatch('account', spec.subscriberAccount, stack.account),
    ...mismatch('region', spec.subscriberRegion, stack.region),
  ]) {
    report(`${problem}: the producer would send to a queue that is not here`);
  }
}

/**
 * A delivery can come as late as its topic's redelivery horizon after it was written; its claim-checked payload is
 * kept `claimCheckExpirationDays`, so the subscriber's queues must not keep a copy longer than that.
 */
function checkClaimCheckExpiration(
  subscription: OutboxSubscription,
  spec: OutboxSubscriptionSpec,
  report: ReportProblem,
): void {
  if (spec.claimCheckExpirationDays === undefined) return;
  const { settings } = subscription.queue;
  for (const topic of spec.topics) {
    const horizonMs = redeliveryHorizonMs({
      policy: retryPolicyOf(spec, topic),
      confirmDeadlineMs: spec.confirmDeadlineMs,
      queueRetentionMs: settings.retentionPeriod.toMilliseconds(),
      deadLetterRetentionMs: settings.deadLetterRetention.toMilliseconds(),
    });
    if (horizonMs >= spec.claimCheckExpirationDays * DAY_MS) {
      report(
        `topic '${topic}': a delivery can still arrive ${(horizonMs / DAY_MS).toFixed(1)} days after it was written ` +
          `(its rounds, retries, this queue's and dead-letter queue's retention), and the producer keeps ` +
          `claim-checked payloads ${spec.claimCheckExpirationDays} days: shorten queueProps.retentionPeriod or ` +
          'deadLetterRetention',
      );
    }
  }
}
