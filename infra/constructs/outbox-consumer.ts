import type { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { CONFIRMATION_ATTRIBUTES, CONFIRMATION_RETURN_VALUES } from '../../shared/aws/outbox-table.ts';
import type { OrderedTopic } from '../../shared/ordering/ordering.ts';
import { redeliveryHorizonMs } from '../../shared/outbox/redelivery-horizon.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../shared/retry/retry-policy.ts';
import { CONSUMER_SETTINGS, OutboxSettings } from '../../shared/settings/outbox-settings.ts';
import { CONSUMER_DEFAULTS } from './defaults.ts';
import { daysOf, millisecondsOf, type SettingValues, settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import type { OutboxClaimCheck } from './outbox-claim-check.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxMonitoring } from './outbox-monitoring.ts';
import type { OutboxScope } from './outbox-scope.ts';
import type { OutboxSweeper } from './outbox-sweeper.ts';
import { newInboxTable } from './outbox-tables.ts';
import type { QueueWithDlq } from './queue-with-dlq.ts';
import { grantLimitedUpdate, grantOnTable, grantSendMessage, queueEventSource } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';
import type {
  OutboxConsumer,
  OutboxConsumerFunctionProps,
  OutboxConsumerProps,
} from './transactional-outbox-props.ts';

/** Lambda takes at most 10 messages per batch from a FIFO queue, and no batching window. */
const MAX_FIFO_BATCH_SIZE = 10;

const DAY_MS = 86_400_000;

/** What a consumer is wired to: the outbox's parts it confirms in, is reconciled by and is watched by. */
export interface OutboxConsumerContext {
  readonly table: dynamodb.ITable;
  /** The queue the consumer reads, with its dead-letter queue. */
  readonly queue: QueueWithDlq;
  /** The topics routed to that queue. */
  readonly topics: readonly string[];
  /** The prop that names the queue (`queues.<name>`), for problems. */
  readonly queueProp: string;
  /** The queue as a problem names it: `queue '<name>'`. */
  readonly queueLabel: string;
  readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;
  readonly sweeper: OutboxSweeper;
  readonly monitoring: OutboxMonitoring;
  readonly claimCheck: OutboxClaimCheck | undefined;
  /** The outbox's retry policies and confirm deadline: with the queues' retention, how late a copy can come. */
  readonly retryPolicies: Readonly<Record<string, RetryPolicy>> | undefined;
  readonly confirmDeadline: Duration | undefined;
}

/**
 * Adds consumer `id` of `context.queue` to the outbox: its function (`<id>`, with `CONSUMER_SETTINGS`), its inbox
 * (`<id>Inbox`, unless one is given), the SQS mapping with partial batch responses, its grants and alarms, and —
 * unless `reconcile` is false — its inbox as the sweeper's proof of delivery for the queue's topics.
 */
export function addOutboxConsumer(
  outbox: OutboxScope,
  props: OutboxConsumerProps & { readonly id: string },
  context: OutboxConsumerContext,
): OutboxConsumer {
  const confirms = props.confirm !== false;
  const { function: fn, inboxTable } = newConsumerFunction(outbox, props, {
    ...context,
    confirmDeadlineMs: millisecondsOf(
      context.confirmDeadline,
      OutboxSettings.confirmDeadlineMs,
      outbox.report,
    ),
    retryPolicyFor: (topic) => context.retryPolicies?.[topic] ?? DEFAULT_RETRY_POLICY,
    // Only to confirm: a consumer that does not confirm never touches the outbox.
    confirmation: confirms
      ? { outboxTable: outbox.settings.outboxTable, retentionDays: outbox.settings.retentionDays }
      : {},
  });
  context.claimCheck?.bindConsumer(fn);
  if (confirms) {
    // Confirming touches only the confirmation's attributes and asks nothing back.
    grantLimitedUpdate(context.table, fn, {
      attributes: CONFIRMATION_ATTRIBUTES,
      returnValues: [CONFIRMATION_RETURN_VALUES],
    });
  }
  if (props.reconcile ?? true) context.sweeper.reconcileWith(inboxTable, context.topics);
  // Receives, writes its inbox and confirms in the outbox, and dead-letters itself.
  grantKeyUse(outbox.encryptionKey, fn, 'write');
  return { function: fn, inboxTable, queue: context.queue };
}

/** What a consumer's function is wired to, wherever it is: its queue, its topics, how it confirms, its alarms. */
export interface ConsumerFunctionWiring {
  /** The queue the consumer reads, with its dead-letter queue. */
  readonly queue: QueueWithDlq;
  /** The topics it receives. */
  readonly topics: readonly string[];
  /** The prop that names the queue, for problems. */
  readonly queueProp: string;
  /** The queue as a problem names it. */
  readonly queueLabel: string;
  /** The ordered topics (of the producer), as ORDERED_TOPICS holds them. */
  readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;
  readonly monitoring: OutboxMonitoring;
  /** The retry policy of each topic's deliveries to this consumer. */
  readonly retryPolicyFor: (topic: string) => RetryPolicy;
  /**
   * Every topic whose copies can reach this consumer, for its inbox retention: its topics and, for a subscriber, the
   * outbox's own messages. @default topics
   */
  readonly horizonTopics?: readonly string[];
  /** How long the producer waits for a confirmation before it resends (ms). */
  readonly confirmDeadlineMs: number;
  /** The settings of how it confirms: the outbox's (OUTBOX_TABLE…) or a receipt queue's (RECEIPT_QUEUE_URL…). */
  readonly confirmation: SettingValues;
  /** The subscriber it applies messages as (SUBSCRIBER): its inbox rows are keyed per subscriber. */
  readonly subscriber?: string;
  /** The IAM path of the function's role. @default '/' */
  readonly rolePath?: string;
}

/**
 * The consumer function `id` of `wiring.queue` and its inbox (`<id>Inbox`, unless one is given), with
 * `CONSUMER_SETTINGS`, the SQS mapping with partial batch responses, the grants on its own inbox and dead-letter
 * queue and its alarms: what every consumer has, whether it confirms in the producer's outbox or by receipt.
 */
export function newConsumerFunction(
  outbox: OutboxScope,
  props: OutboxConsumerFunctionProps & { readonly id: string },
  wiring: ConsumerFunctionWiring,
): { readonly function: OutboxFunction; readonly inboxTable: dynamodb.ITable } {
  const { id } = props;
  const { queue, topics } = wiring;
  if (props.existingInboxTable !== undefined && props.inboxTableProps !== undefined) {
    outbox.report(`consumer ${id}: give either existingInboxTable or inboxTableProps, not both`);
  }
  const inboxTable =
    props.existingInboxTable ?? newInboxTable(outbox, `${id}Inbox`, props.inboxTableProps ?? {});
  const settings = queue.settings;
  const inboxRetentionDays = daysOf(props.inboxRetention, OutboxSettings.inboxRetentionDays, outbox.report);
  const timeout = props.functionProps?.timeout ?? CONSUMER_DEFAULTS.timeout;
  const ordered = topics.some((topic) => wiring.orderedTopics[topic] !== undefined);
  const values: SettingValues = {
    inboxTable: { value: inboxTable.tableName, prop: `${id}.existingInboxTable` },
    inboxRetentionDays: { value: inboxRetentionDays, prop: `${id}.inboxRetention` },
    sourceQueueUrl: { value: queue.queue.queueUrl, prop: wiring.queueProp },
    deadLetterQueueUrl: { value: queue.deadLetterQueue.queueUrl, prop: wiring.queueProp },
    maxReceiveCount: { value: settings.maxReceiveCount, prop: `${wiring.queueProp}.maxReceiveCount` },
    // Its inbox rows are keyed per subscriber, and its receipts signed with the name.
    ...(wiring.subscriber === undefined
      ? {}
      : { subscriber: { value: wiring.subscriber, prop: `${id}.subscriber` } }),
    ...(Object.keys(wiring.orderedTopics).length === 0
      ? {}
      : { orderedTopics: { value: wiring.orderedTopics, prop: 'ordering' } }),
    ...wiring.confirmation,
  };
  const fn = new OutboxFunction(outbox.scope, id, {
    timeout: CONSUMER_DEFAULTS.timeout,
    memorySize: CONSUMER_DEFAULTS.memorySize,
    logGroupRemovalPolicy: outbox.removalPolicy,
    ...props.functionProps,
    ...(wiring.rolePath === undefined ? {} : { rolePath: wiring.rolePath }),
    entry: props.entry,
    metricsNamespace: outbox.metricsNamespace,
    environment: {
      ...props.functionProps?.environment,
      ...settingsEnvironment(CONSUMER_SETTINGS, values, outbox.report),
    },
  });
  markOutboxRole(fn, OutboxResourceRole.CONSUMER, { subscriber: wiring.subscriber });
  if (props.existingInboxTable === undefined) {
    markOutboxRole(inboxTable, OutboxResourceRole.INBOX_TABLE, { topics, subscriber: wiring.subscriber });
  }
  wiring.monitoring.watchConsumer(fn, { service: fn.serviceName, topics });
  if (timeout.toSeconds() > settings.visibilityTimeout.toSeconds()) {
    outbox.report(
      `${wiring.queueLabel}: its visibility timeout (${settings.visibilityTimeout.toSeconds()} s) must be at ` +
        `least consumer ${id}'s timeout (${timeout.toSeconds()} s); AWS advises 6 times it`,
    );
  }
  checkInboxRetention(outbox, { id, inboxRetentionDays }, wiring);
  const batchSize = props.batchSize ?? CONSUMER_DEFAULTS.batchSize;
  if (settings.fifo) checkFifoMapping(outbox, { ...props, id, batchSize }, wiring.queueLabel);

  fn.addEventSource(
    queueEventSource(queue.queue, {
      batchSize,
      // Lambda refuses a batching window on a FIFO queue.
      ...(settings.fifo
        ? {}
        : { maxBatchingWindow: props.maxBatchingWindow ?? CONSUMER_DEFAULTS.maxBatchingWindow }),
    }),
  );
  // The inbox put commits with the effect in one transaction: PutItem on the inbox, nothing else there —
  // unless the queue carries ordered topics: then the same transaction advances the order key's cursor row
  // (UpdateItem) or parks an early message (PutItem, ConditionCheckItem on the cursor), and the consumer reads
  // the parked successor (GetItem) and removes it once applied (DeleteItem).
  grantOnTable(inboxTable, fn, [
    'dynamodb:PutItem',
    ...(ordered
      ? ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem']
      : []),
  ]);
  // A message that can never be processed is dead-lettered by the consumer itself, with its reason.
  grantSendMessage(queue.deadLetterQueue, fn);
  return { function: fn, inboxTable };
}

/**
 * An inbox row must outlive every copy of a message that can still arrive, or the late copy applies twice:
 * the longest redelivery horizon of the queue's topics, the queue's retention and then the dead-letter queue's
 * (the consumer dead-letters a copy with a fresh send, which can be redriven until it expires there).
 */
function checkInboxRetention(
  outbox: OutboxScope,
  { id, inboxRetentionDays }: { readonly id: string; readonly inboxRetentionDays: number },
  wiring: ConsumerFunctionWiring,
): void {
  const queueRetentionMs = wiring.queue.settings.retentionPeriod.toMilliseconds();
  const deadLetterRetentionMs = wiring.queue.settings.deadLetterRetention.toMilliseconds();
  for (const topic of wiring.horizonTopics ?? wiring.topics) {
    const horizonMs = redeliveryHorizonMs({
      policy: wiring.retryPolicyFor(topic),
      confirmDeadlineMs: wiring.confirmDeadlineMs,
      queueRetentionMs,
      deadLetterRetentionMs,
    });
    const retentionMs = inboxRetentionDays * DAY_MS;
    if (retentionMs <= horizonMs) {
      outbox.report(
        `consumer ${id}: inboxRetention (${OutboxSettings.inboxRetentionDays.name} = ${inboxRetentionDays} days) ` +
          'must be longer than the redelivery horizon ' +
          `of topic '${topic}' (${(horizonMs / DAY_MS).toFixed(1)} days: every delivery round's deadline, ` +
          "send retries, the queue's retention and then the dead-letter queue's), or a late copy would be applied twice",
      );
    }
  }
}

/** Lambda reads a FIFO queue in batches of at most 10 and without a batching window. */
function checkFifoMapping(
  outbox: OutboxScope,
  props: OutboxConsumerFunctionProps & { readonly id: string; readonly batchSize: number },
  queueLabel: string,
): void {
  const { id } = props;
  if (props.batchSize > MAX_FIFO_BATCH_SIZE) {
    outbox.report(
      `consumer ${id}: ${queueLabel} is FIFO, so batchSize must be at most ${MAX_FIFO_BATCH_SIZE}, ` +
        `got ${props.batchSize}`,
    );
  }
  if (props.maxBatchingWindow !== undefined) {
    outbox.report(
      `consumer ${id}: ${queueLabel} is FIFO, and Lambda takes no maxBatchingWindow from a FIFO queue`,
    );
  }
}
