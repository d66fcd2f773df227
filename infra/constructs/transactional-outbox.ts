import { AspectPriority, Aspects, Names, Stack, Token } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { OUTBOX_KEYS } from '../../shared/aws/outbox-table.ts';
import { CONTROL_TOPICS } from '../../shared/message/control-topics.ts';
import { type OrderedTopic, SequenceSource, sequenceSourceOf } from '../../shared/ordering/ordering.ts';
import type { RetryPolicy } from '../../shared/retry/retry-policy.ts';
import { retryPolicyLookup } from '../../shared/retry/topic-policies.ts';
import { OutboxSettings, WRITER_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { METRICS_DEFAULTS } from './defaults.ts';
import {
  addToEnvironment,
  daysOf,
  millisecondsOf,
  type ReportProblem,
  type SettingValues,
  settingsEnvironment,
} from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { acknowledgeOutboxNagFindings } from './nag-suppressions.ts';
import { OutboxAdmin, type OutboxAdminApi, type OutboxAdminApiProps } from './outbox-admin-api.ts';
import { addOutboxArchive } from './outbox-archive.ts';
import { OutboxClaimCheck } from './outbox-claim-check.ts';
import { addOutboxConsumer } from './outbox-consumer.ts';
import type { OutboxFunction } from './outbox-function.ts';
import { newOutboxMonitoring, type OutboxMonitoring } from './outbox-monitoring.ts';
import { OutboxReceipts } from './outbox-receipts.ts';
import { addOutboxRelay } from './outbox-relay.ts';
import type { OutboxScope } from './outbox-scope.ts';
import type { OutboxSubscriptionSpec } from './outbox-subscription-spec.ts';
import { OutboxSweeper } from './outbox-sweeper.ts';
import { newAuditTable, newOutboxTable, newSequenceTable } from './outbox-tables.ts';
import { checkedOrdering, newTopicQueues, subscriberQueues, topicsOf } from './outbox-topics.ts';
import type { QueueWithDlq } from './queue-with-dlq.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
import { allowClaimCheckReadsBy, grantSubscriberQueueKeys } from './subscriber-grants.ts';
import {
  claimCheckBucketNameOf,
  literalOrUndefined,
  MAX_OUTBOX_NAME_LENGTH,
  OUTBOX_NAME_PATTERN,
  senderRolePath,
} from './subscription-names.ts';
import { grantOnTable, grantQueryOnIndexes } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';
import type {
  OutboxConsumer,
  OutboxConsumerProps,
  OutboxWriterBindingOptions,
  TransactionalOutboxProps,
} from './transactional-outbox-props.ts';

/** CloudWatch namespaces: letters, digits and `. - _ / # :`, at most 255, never `AWS/`. */
const METRICS_NAMESPACE = /^(?!AWS\/)[A-Za-z0-9.\-_/#:]{1,255}$/;

/** What a reader (`readAggregateMessages`) reads: the outbox table, nothing else. */
const READER_SETTINGS = [OutboxSettings.outboxTable] as const;

/**
 * The outbox side of a service on AWS: the outbox table with its stream and indexes, one queue (with a
 * dead-letter queue) per group of topics, the stream relay, the scheduled sweeper, and — added with
 * {@link TransactionalOutbox.addConsumer} — consumers with their inboxes; for operators, the audit table,
 * alarms sent to one SNS topic, a CloudWatch dashboard and, with `archive`, an S3 archive of expired messages.
 * Every function is traced with X-Ray and publishes its metrics to `metricsNamespace`, gets its settings from
 * the library's settings contract, and every setting is checked at `cdk synth` with the rule the function
 * applies at start. Each resource an operator tool needs carries its role in the template metadata.
 * @example
 * const outbox = new TransactionalOutbox(this, 'Outbox', { queues: { orderEvents: { topics: ['order.created'] } } });
 * outbox.bindWriter(createOrder);
 * outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: 'src/inventory/apply-order.ts' });
 */
export class TransactionalOutbox extends Construct {
  /** The outbox table. */
  public readonly table: dynamodb.ITable;
  /** ARN of the outbox table's stream. */
  public readonly streamArn: string;
  /** The topic queues by name, each with its dead-letter queue. */
  public readonly queues: Readonly<Record<string, QueueWithDlq>>;
  /** Topic → the queue its messages go to. */
  public readonly topicRoutes: ReadonlyMap<string, sqs.IQueue>;
  /**
   * The outbox's name: the base of the names it shares with its subscribers (`<name>-<subscriber>` queues, the
   * `<name>-receipts` queue, the IAM paths of the roles on either side).
   */
  public readonly outboxName: string;
  /**
   * The subscribers' queues by subscriber name: each in the subscriber's own stack, referred to by its derived ARN
   * and URL.
   */
  public readonly subscriberQueues: Readonly<Record<string, sqs.IQueue>>;
  /** Topic → its subscribers by name → the queue each one's deliveries go to. */
  public readonly subscriberRoutes: ReadonlyMap<string, ReadonlyMap<string, sqs.IQueue>>;
  /** Receives the metadata of stream batches the relay gave up on (the sweeper delivers their messages). */
  public readonly failureQueue: sqs.Queue;
  /** The stream → SQS relay. */
  public readonly relay: OutboxFunction;
  /** The relay's stream mapping. */
  public readonly streamSource: sources.DynamoEventSource;
  /** The sweeper: due retries, lost stream records, expired claims, unconfirmed messages. */
  public readonly sweeper: OutboxFunction;
  /** The EventBridge rule that runs the sweeper. */
  public readonly sweeperSchedule: events.Rule;
  /** The audit trail of operator actions (replay, cancel, redrive, erase), keyed `subject`/`actionId`. */
  public readonly auditTable: dynamodb.Table;
  /** The topic every alarm of the outbox notifies. */
  public readonly alarmTopic: sns.ITopic;
  /**
   * The alarms by name: `deadLetters/<queue>`, `relayFailures`, `failedMessages/<topic>`,
   * `oldestPendingAge/<topic>`, `orderingGaps/<topic>` (ordered topics), `relayIteratorAge`,
   * `failedDeliveries/<subscriber>` and `unconfirmedAge/<subscriber>` for each subscriber, and
   * `errors/<function id>` and `throttles/<function id>` for the relay, the sweeper, the archiver, each consumer and
   * the admin API.
   */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The outbox's CloudWatch dashboard: alarms, queues, functions, and each topic's and subscriber's metrics. */
  public readonly dashboard: cloudwatch.Dashboard;
  /** The archive of expired messages, when `archive` is set. */
  public readonly archiveBucket: s3.IBucket | undefined;
  /** The archiver, when `archive` is set. */
  public readonly archiver: OutboxFunction | undefined;
  /** The customer-managed key of the outbox's tables, queues and archive, when `encryptionKey` is set. */
  public readonly encryptionKey: kms.IKey | undefined;
  /** The claim check of large payloads (its bucket, threshold and expiry), unless `claimCheck` is false. */
  public readonly claimCheck: OutboxClaimCheck | undefined;
  /** The ordered topics with their scope and gap timeout in ms (as ORDERED_TOPICS holds them); `{}` when none. */
  public readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;

  readonly #props: TransactionalOutboxProps;
  readonly #problems: string[] = [];
  /** What the parts share: this construct as their scope, the problem list, the outbox-wide settings. */
  readonly #outbox: OutboxScope;
  readonly #sweeper: OutboxSweeper;
  readonly #monitoring: OutboxMonitoring;
  readonly #consumersByQueue = new Map<string, OutboxConsumer>();
  #receipts: OutboxReceipts | undefined;
  #admin: OutboxAdmin | undefined;
  #sequenceTable: dynamodb.Table | undefined;
  #policies: SubscriberPolicies | undefined;

  constructor(scope: Construct, id: string, props: TransactionalOutboxProps) {
    super(scope, id);
    this.#props = props;
    this.encryptionKey = props.encryptionKey;
    this.node.addValidation({ validate: () => [...new Set(this.#problems)] });
    const report: ReportProblem = (problem) => this.#problems.push(`TransactionalOutbox: ${problem}`);
    const parts: OutboxScope = {
      scope: this,
      report,
      metricsNamespace: this.metricsNamespace,
      removalPolicy: props.removalPolicy,
      encryptionKey: props.encryptionKey,
      settings: {},
    };

    this.table = props.existingOutboxTable ?? newOutboxTable(parts, props.outboxTableProps ?? {});
    if (props.existingOutboxTable !== undefined && props.outboxTableProps !== undefined) {
      report('give either existingOutboxTable or outboxTableProps, not both');
    }
    if (this.table.tableStreamArn === undefined) {
      throw new Error(`TransactionalOutbox ${this.node.path}: the outbox table has no stream`);
    }
    this.streamArn = this.table.tableStreamArn;
    const { queues, routes } = newTopicQueues(parts, props);
    this.queues = queues;
    this.topicRoutes = routes;
    this.outboxName = checkedOutboxName(this, props.name, report);
    // A subscriber's stack names its producer by this name; operator tools find the producer's stack by it.
    if (props.existingOutboxTable === undefined) {
      markOutboxRole(this.table, OutboxResourceRole.OUTBOX_TABLE, { outboxName: this.outboxName });
    }
    const subscribed = subscriberQueues(parts, { ...props, outboxName: this.outboxName });
    this.subscriberQueues = subscribed.queues;
    this.subscriberRoutes = subscribed.routes;
    const hasSubscribers = subscribed.routes.size > 0;
    this.orderedTopics = checkedOrdering(props, report);
    const ordered = Object.keys(this.orderedTopics).length > 0;
    if (!METRICS_NAMESPACE.test(this.metricsNamespace)) {
      report(
        `metricsNamespace must be 1–255 letters, digits or . - _ / # : and not start with AWS/, got ` +
          `'${this.metricsNamespace}'`,
      );
    }
    this.#outbox = {
      ...parts,
      // The relay and the sweeper send to subscribers' queues, whose policies allow the roles under this path.
      ...(hasSubscribers ? { senderRolePath: senderRolePath(this.outboxName) } : {}),
      settings: this.#sharedSettings(report),
    };
    const sendsTo = [...routes.values(), ...Object.values(subscribed.queues)];

    const relay = addOutboxRelay(this.#outbox, {
      table: this.table,
      queues: sendsTo,
      functionProps: props.relayFunctionProps,
      streamProps: props.streamProps,
    });
    this.failureQueue = relay.failureQueue;
    this.relay = relay.function;
    this.streamSource = relay.streamSource;
    this.#sweeper = new OutboxSweeper(this.#outbox, {
      table: this.table,
      queues: sendsTo,
      ordered,
      functionProps: props.sweeperFunctionProps,
      schedule: props.sweeperSchedule,
      maxMessagesPerSecond: props.sweeperMaxMessagesPerSecond,
    });
    this.sweeper = this.#sweeper.function;
    this.sweeperSchedule = this.#sweeper.schedule;

    // No function is granted the audit table here: only the admin API writes it.
    this.auditTable = newAuditTable(this.#outbox, props.auditTableProps ?? {});

    this.#monitoring = newOutboxMonitoring(this.#outbox, {
      ...props,
      queues,
      failureQueue: this.failureQueue,
      relay: this.relay,
      sweeper: this.sweeper,
      // A topic both on a (draining) queue and with subscribers is watched once; the outbox's own messages to
      // subscribers (erase, skip) can fail like any delivery, so they are watched too.
      topics: new Set([
        ...routes.keys(),
        ...subscribed.routes.keys(),
        ...(hasSubscribers ? CONTROL_TOPICS : []),
      ]),
      orderedTopics: this.orderedTopics,
      subscribers: { outboxName: this.outboxName, declared: props.subscribers ?? {} },
    });
    if (hasSubscribers) {
      this.#receipts = new OutboxReceipts(this.#outbox, {
        table: this.table,
        monitoring: this.#monitoring,
        outboxName: this.outboxName,
        subscribers: props.subscribers ?? {},
      });
      grantSubscriberQueueKeys(this, props.subscribers ?? {}, [this.relay, this.sweeper]);
    }
    this.alarmTopic = this.#monitoring.alarmTopic;
    this.alarms = this.#monitoring.alarms;
    this.dashboard = this.#monitoring.dashboard;

    const archive =
      props.archive === undefined || props.archive === false
        ? undefined
        : addOutboxArchive(this, {
            ...(props.archive === true ? {} : props.archive),
            table: this.table,
            entry: SHIPPED_ENTRIES.archiver,
            metricsNamespace: this.metricsNamespace,
            removalPolicy: props.removalPolicy,
            report,
            ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
          });
    // The archiver only reads the stream (its records are decrypted with the caller's right); its puts are
    // granted with the bucket.
    if (archive !== undefined) this.encryptionKey?.grant(archive.archiver, 'kms:Decrypt');
    this.archiveBucket = archive?.bucket;
    this.claimCheck =
      props.claimCheck === false
        ? undefined
        : new OutboxClaimCheck(this, 'ClaimCheck', {
            ...props,
            ...props.claimCheck,
            queues,
            topicRoutes: routes,
            // Subscribers in other stacks read payloads from it: they derive its name as they derive their queue's.
            ...(hasSubscribers ? { bucketName: claimCheckBucketNameOf(this.outboxName, this.#place()) } : {}),
            subscriberPolicies: Object.entries(props.subscribers ?? {}).flatMap(([name, subscriber]) =>
              [...subscriber.topics, ...CONTROL_TOPICS].map((topic) =>
                this.#subscriberPolicies().policyFor(topic, name),
              ),
            ),
          });
    // Subscribers in other stacks read the payloads of their deliveries (a bucket you passed in keeps its policy).
    if (
      this.claimCheck !== undefined &&
      hasSubscribers &&
      props.claimCheck !== false &&
      props.claimCheck?.bucket === undefined
    ) {
      allowClaimCheckReadsBy(this.claimCheck.bucket, {
        outboxName: this.outboxName,
        subscribers: props.subscribers ?? {},
      });
    }
    this.archiver = archive?.archiver;
    if (archive !== undefined) this.#monitoring.watchFunction(archive.archiver);

    // What joins the admin API to the consumers is granted once all of them are known, when the app is
    // synthesized: so `addAdminApi` and `addConsumer` may be called in either order, for the same template.
    Aspects.of(this).add(
      { visit: (node) => (node === this ? this.#completeAdminApi() : undefined) },
      { priority: AspectPriority.MUTATING },
    );
    // cdk-nag findings that are the outbox's design, with their reasons (see nag-suppressions.ts).
    acknowledgeOutboxNagFindings(this);
  }

  /** The CloudWatch namespace of the metrics every function of the outbox publishes. */
  get metricsNamespace(): string {
    return this.#props.metricsNamespace ?? METRICS_DEFAULTS.namespace;
  }

  /** The number of due-index partitions writers and the sweeper use. */
  get dueShards(): number {
    return this.#props.dueShards ?? OutboxSettings.dueShards.defaultValue ?? 1;
  }

  /**
   * The writers' counter of each order key's last seq (`orderKey` → `lastSeq`): created when a topic is ordered
   * and a writer is bound that numbers messages with it (see `bindWriter`). A table of its own, so counter
   * updates never reach the outbox stream.
   */
  get sequenceTable(): dynamodb.ITable | undefined {
    return this.#sequenceTable;
  }

  /**
   * The receipt queue and the receipts function, when the outbox has subscribers.
   */
  get receipts(): OutboxReceipts | undefined {
    return this.#receipts;
  }

  /** The admin API, once {@link TransactionalOutbox.addAdminApi} added it. */
  get adminApi(): OutboxAdminApi | undefined {
    return this.#admin?.api;
  }

  /**
   * Adds the admin API to `api`: GET and POST on `/admin/{proxy+}`, AWS_IAM-authorised (never open), served by
   * the shipped admin function with the admin's settings (`ADMIN_SETTINGS`) and the grants it needs — list and
   * show messages, replay, cancel, bulk replay, DLQ redrive, stats and erase, every action audited under the
   * IAM caller's ARN — with its errors and throttles alarms. Before or after the consumers, either way: an erase
   * clears the inboxes of every consumer the outbox has when it is synthesized.
   * @example
   * const api = new apigateway.RestApi(this, 'Api', { deployOptions: { tracingEnabled: true } });
   * outbox.addAdminApi(api);
   */
  addAdminApi(api: apigateway.IRestApi, props: OutboxAdminApiProps = {}): OutboxAdminApi {
    if (this.#admin !== undefined) {
      throw new Error(`TransactionalOutbox ${this.node.path}: addAdminApi was already called`);
    }
    const admin = new OutboxAdmin(this.#outbox, {
      ...props,
      api,
      outboxTable: this.table,
      auditTable: this.auditTable,
      queues: Object.values(this.queues).map((queue) => ({
        queue: queue.queue,
        deadLetterQueue: queue.deadLetterQueue,
        topics: topicsOf(this.topicRoutes, queue.queue),
      })),
      // Each consumer's inbox proves its topics' deliveries, and an erase clears it.
      deliveryInboxes: () =>
        Object.fromEntries(
          [...this.#consumersByQueue.values()].flatMap((consumer) =>
            topicsOf(this.topicRoutes, consumer.queue.queue).map((topic) => [
              topic,
              consumer.inboxTable.tableName,
            ]),
          ),
        ),
    });
    this.#monitoring.watchAdmin(admin.api.function);
    this.#admin = admin;
    return admin.api;
  }

  /**
   * Lets `fn` write messages with `writeWithOutbox`: sets the writer's settings (OUTBOX_TABLE, DUE_SHARDS,
   * STREAM_GRACE_MS, read with `outboxWriterFromEnv`) and allows PutItem on the outbox table — nothing else but,
   * with the claim check, its settings and s3:PutObject under the bucket's `claim-check/` prefix, and with ordered
   * topics, ORDERED_TOPICS, SEQUENCE_TABLE and GetItem and UpdateItem on the sequence table (a writer reads an
   * order key's counter and advances it in the message's transaction) unless `options.sequenceCounter` is false.
   * @example
   * outbox.bindWriter(createOrder);
   * // Writes ordered messages only with `aggregateVersions`, so never reads or advances a counter:
   * outbox.bindWriter(cancelOrder, { sequenceCounter: false });
   */
  bindWriter(fn: lambda.Function, options: OutboxWriterBindingOptions = {}): void {
    const counted = Object.values(this.orderedTopics).some(
      (topic) => sequenceSourceOf(topic) === SequenceSource.COUNTER,
    );
    const numbered = counted && options.sequenceCounter !== false;
    if (numbered) this.#sequenceTable ??= newSequenceTable(this.#outbox);
    const sequenceTable = numbered ? this.#sequenceTable : undefined;
    const { report, settings } = this.#outbox;
    const values: SettingValues = {
      outboxTable: settings.outboxTable,
      dueShards: settings.dueShards,
      streamGraceMs: {
        value: millisecondsOf(this.#props.streamGracePeriod, OutboxSettings.streamGraceMs, report),
        prop: 'streamGracePeriod',
      },
      orderedTopics: settings.orderedTopics,
      subscriptions: settings.subscriptions,
      ...(sequenceTable === undefined
        ? {}
        : { sequenceTable: { value: sequenceTable.tableName, prop: 'sequenceTable' } }),
    };
    addToEnvironment(fn, settingsEnvironment(WRITER_SETTINGS, values, report));
    grantOnTable(this.table, fn, ['dynamodb:PutItem']);
    if (sequenceTable !== undefined) {
      grantOnTable(sequenceTable, fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    }
    this.claimCheck?.bindWriter(fn);
    grantKeyUse(this.encryptionKey, fn, 'write');
  }

  /**
   * Lets `fn` list an aggregate's messages (`readAggregateMessages`), e.g. to show an order's delivery status: sets
   * OUTBOX_TABLE and allows Query on the `byAggregate` index, which holds keys only, and GetItem on the table to read
   * each message.
   */
  bindReader(fn: lambda.Function): void {
    addToEnvironment(fn, settingsEnvironment(READER_SETTINGS, this.#outbox.settings, this.#outbox.report));
    grantQueryOnIndexes(this.table, fn, [OUTBOX_KEYS.aggregateIndex.name]);
    grantOnTable(this.table, fn, ['dynamodb:GetItem']);
    grantKeyUse(this.encryptionKey, fn, 'read');
  }

  /**
   * Adds a consumer of one of the outbox's queues: the function (built from `entry`, a module exporting
   * `createConsumerHandler(...)`), its inbox table, the SQS mapping with partial batch responses, its settings
   * and grants, and — unless `reconcile` is false — its inbox as the sweeper's proof of delivery for the
   * queue's topics. Grant the function your own tables yourself.
   * @example
   * const consumer = outbox.addConsumer('InventoryConsumer', {
   *   queue: 'orderEvents',
   *   entry: 'functions/inventory/apply-order/handler.ts',
   *   functionProps: { environment: { INVENTORY_TABLE: inventory.tableName } },
   * });
   * inventory.grant(consumer.function, 'dynamodb:UpdateItem');
   */
  addConsumer(id: string, props: OutboxConsumerProps): OutboxConsumer {
    const queue = this.queues[props.queue];
    if (queue === undefined) {
      const subscriber = Object.hasOwn(this.#props.subscribers ?? {}, props.queue)
        ? `; '${props.queue}' is a subscriber: add its consumer in its own stack with an OutboxSubscription built from subscriptionSpec('${props.queue}')`
        : '';
      throw new Error(
        `TransactionalOutbox ${this.node.path}: addConsumer('${id}') names queue '${props.queue}'; the outbox has ` +
          `${Object.keys(this.queues).join(', ') || 'none'}${subscriber}`,
      );
    }
    if (this.#consumersByQueue.has(props.queue)) {
      this.#outbox.report(
        `queue '${props.queue}' has more than one consumer (${id}); a queue has one consumer`,
      );
    }
    const consumer = addOutboxConsumer(
      this.#outbox,
      { ...props, id },
      {
        table: this.table,
        queue,
        topics: topicsOf(this.topicRoutes, queue.queue),
        queueProp: `queues.${props.queue}`,
        queueLabel: `queue '${props.queue}'`,
        orderedTopics: this.orderedTopics,
        sweeper: this.#sweeper,
        monitoring: this.#monitoring,
        claimCheck: this.claimCheck,
        retryPolicies: this.#props.retryPolicies,
        confirmDeadline: this.#props.confirmDeadline,
      },
    );
    this.#consumersByQueue.set(props.queue, consumer);
    return consumer;
  }

  /**
   * Everything `subscriber`'s own stack needs to receive this outbox's deliveries, as plain values: pass it to the
   * `OutboxSubscription` in that stack (in another app or account, write the same values there, copying `keyArn`
   * and `claimCheckBucketName` from this stack once it is deployed). Throws for a name not in `subscribers`.
   * @example
   * new OutboxSubscription(inventoryStack, 'OrderEvents', {
   *   spec: orders.outbox.subscriptionSpec('inventory'),
   *   entry: 'functions/inventory/apply-order/handler.ts',
   * });
   */
  subscriptionSpec(subscriber: string): OutboxSubscriptionSpec {
    const declared = Object.hasOwn(this.#props.subscribers ?? {}, subscriber)
      ? this.#props.subscribers?.[subscriber]
      : undefined;
    if (declared === undefined) {
      throw new Error(
        `TransactionalOutbox ${this.node.path}: no subscriber '${subscriber}'; the outbox has ` +
          `${Object.keys(this.#props.subscribers ?? {}).join(', ') || 'none'}`,
      );
    }
    const topics = [...declared.topics];
    const policies = this.#subscriberPolicies();
    const { account: producerAccount, region: producerRegion } = this.#place();
    return {
      outboxName: this.outboxName,
      subscriber,
      topics,
      orderedTopics: Object.fromEntries(
        topics.flatMap((topic) => {
          const ordering = this.orderedTopics[topic];
          return ordering === undefined ? [] : [[topic, ordering]];
        }),
      ),
      fifo: declared.fifo === true,
      ...(producerAccount === undefined ? {} : { producerAccount }),
      ...(producerRegion === undefined ? {} : { producerRegion }),
      ...((declared.account ?? producerAccount) === undefined
        ? {}
        : { subscriberAccount: declared.account ?? producerAccount }),
      ...((declared.region ?? producerRegion) === undefined
        ? {}
        : { subscriberRegion: declared.region ?? producerRegion }),
      ...(this.encryptionKey === undefined ? {} : { keyArn: this.encryptionKey.keyArn }),
      ...(this.claimCheck === undefined
        ? {}
        : {
            claimCheckBucketName:
              this.#props.claimCheck !== false && this.#props.claimCheck?.bucket !== undefined
                ? this.claimCheck.bucket.bucketName
                : claimCheckBucketNameOf(this.outboxName, {
                    account: producerAccount,
                    region: producerRegion,
                  }),
            claimCheckExpirationDays: this.claimCheck.expiration.toDays(),
          }),
      // Its topics' and the outbox's own messages' (erase, skip), which come on the same queue.
      retryPolicies: Object.fromEntries(
        [...topics, ...CONTROL_TOPICS].map((topic) => [topic, policies.policyFor(topic, subscriber)]),
      ),
      confirmDeadlineMs: millisecondsOf(
        this.#props.confirmDeadline,
        OutboxSettings.confirmDeadlineMs,
        this.#outbox.report,
      ),
    };
  }

  /** The outbox's account and region where they are known at synth; `undefined` each for an agnostic stack. */
  #place(): { readonly account: string | undefined; readonly region: string | undefined } {
    const stack = Stack.of(this);
    return { account: literalOrUndefined(stack.account), region: literalOrUndefined(stack.region) };
  }

  /** The retry policy of each topic and subscriber, as the relay and the sweeper look them up (built once). */
  #subscriberPolicies(): SubscriberPolicies {
    this.#policies ??= this.#newSubscriberPolicies();
    return this.#policies;
  }

  #newSubscriberPolicies(): SubscriberPolicies {
    const bySubscriber = Object.fromEntries(
      Object.entries(this.#props.subscribers ?? {}).flatMap(([name, subscriber]) =>
        subscriber.retryPolicy === undefined ? [] : [[name, subscriber.retryPolicy]],
      ),
    );
    return { bySubscriber, policyFor: retryPolicyLookup(this.#props.retryPolicies ?? {}, bySubscriber) };
  }

  /**
   * The values of the settings every function that reads them gets: the outbox table, the routes, the retry
   * policies, the confirm deadline, the retention, the due shards and, with an ordered topic, ORDERED_TOPICS.
   */
  #sharedSettings(report: ReportProblem): SettingValues {
    const props = this.#props;
    const routeUrls = Object.fromEntries(
      [...this.topicRoutes].map(([topic, queue]) => [topic, queue.queueUrl]),
    );
    return {
      outboxTable: { value: this.table.tableName, prop: 'existingOutboxTable' },
      topicQueues: { text: Stack.of(this).toJsonString(routeUrls) },
      retryPolicies: { value: props.retryPolicies ?? {}, prop: 'retryPolicies' },
      ...(Object.values(props.subscribers ?? {}).some((subscriber) => subscriber.retryPolicy !== undefined)
        ? {
            subscriberRetryPolicies: {
              value: this.#subscriberPolicies().bySubscriber,
              prop: 'subscribers.<name>.retryPolicy',
            },
          }
        : {}),
      confirmDeadlineMs: {
        value: millisecondsOf(props.confirmDeadline, OutboxSettings.confirmDeadlineMs, report),
        prop: 'confirmDeadline',
      },
      retentionDays: {
        value: daysOf(props.retention, OutboxSettings.retentionDays, report),
        prop: 'retention',
      },
      // A message that becomes FAILED is filed in the attention index under its due shard.
      dueShards: { value: this.dueShards, prop: 'dueShards' },
      // Who receives which topics, and on which queue: none is told when the outbox has no subscriber.
      ...(this.subscriberRoutes.size === 0
        ? {}
        : {
            subscriptions: {
              text: Stack.of(this).toJsonString(
                Object.fromEntries(
                  [...this.subscriberRoutes].map(([topic, queues]) => [
                    topic,
                    Object.fromEntries([...queues].map(([name, queue]) => [name, queue.queueUrl])),
                  ]),
                ),
              ),
            },
          }),
      // Every function follows an order key's seq; none is told of ordering when no topic is ordered.
      ...(Object.keys(this.orderedTopics).length === 0
        ? {}
        : { orderedTopics: { value: this.orderedTopics, prop: 'ordering' } }),
    };
  }

  /**
   * The admin's grants that depend on the consumers — a Query on the byOrderKey index and each ordered topic's
   * inbox, for a skip — then the claim check's erase and the key, once, when the app is synthesized.
   */
  #completeAdminApi(): void {
    const consumers = [...this.#consumersByQueue.values()];
    this.#admin?.complete({
      // A skip of an ordering gap moves the order key's cursor in the inboxes of the ordered topics' consumers.
      orderedInboxTables: consumers
        .filter((consumer) =>
          topicsOf(this.topicRoutes, consumer.queue.queue).some(
            (topic) => this.orderedTopics[topic] !== undefined,
          ),
        )
        .map((consumer) => consumer.inboxTable),
      claimCheck: this.claimCheck,
      subscribers: this.subscriberRoutes.size > 0,
      orderedSubscribers: [...this.subscriberRoutes.keys()].some(
        (topic) => this.orderedTopics[topic] !== undefined,
      ),
    });
  }
}

/**
 * The outbox's name: `name`, checked; or `<stack name>-<construct path>`, or a unique shortened form of it when that
 * is longer than {@link MAX_OUTBOX_NAME_LENGTH} or holds other characters.
 */
function checkedOutboxName(outbox: Construct, name: string | undefined, report: ReportProblem): string {
  if (name !== undefined && OUTBOX_NAME_PATTERN.test(name)) return name;
  // A bad name fails synth, named; the outbox is still built (with a name IAM and SQS accept) so that every
  // other problem is reported with it.
  if (name !== undefined)
    report(`name must be 1–${MAX_OUTBOX_NAME_LENGTH} letters, digits, - or _, got '${name}'`);
  const stack = Stack.of(outbox);
  const scopes = outbox.node.scopes;
  const path = scopes.slice(scopes.indexOf(stack) + 1).map((scope) => scope.node.id);
  const readable = [stack.stackName, ...path].join('-');
  if (name === undefined && !Token.isUnresolved(readable) && OUTBOX_NAME_PATTERN.test(readable))
    return readable;
  return Names.uniqueResourceName(outbox, {
    maxLength: MAX_OUTBOX_NAME_LENGTH,
    separator: '-',
    allowedSpecialCharacters: '-_',
  });
}

/** The retry policies of an outbox's deliveries: per subscriber, and the lookup the relay and the sweeper use. */
interface SubscriberPolicies {
  readonly bySubscriber: Readonly<Record<string, RetryPolicy>>;
  readonly policyFor: (topic: string, subscriber?: string) => RetryPolicy;
}
