import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { CONFIRMATION_ATTRIBUTES, CONFIRMATION_RETURN_VALUES } from '../../shared/aws/outbox-table.ts';
import { RECEIPTS_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxMonitoring } from './outbox-monitoring.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { QueueWithDlq } from './queue-with-dlq.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
import { allowKeyUseBy, allowReceiptsFrom, type SubscriberPrincipals } from './subscriber-grants.ts';
import { receiptQueueName } from './subscription-names.ts';
import { grantLimitedUpdate, queueEventSource } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** What the receipts function is wired to. */
export interface OutboxReceiptsContext extends SubscriberPrincipals {
  readonly table: dynamodb.ITable;
  readonly monitoring: OutboxMonitoring;
}

/**
 * The producer's side of receipts: a receipt queue (with its dead-letter queue) that subscribers send to, and the
 * receipts function that confirms each receipt's delivery in the outbox (it reads SUBSCRIPTIONS: who receives
 * which topics). Created with the outbox when it has subscribers. The queue is named `<outbox name>-receipts`, so
 * each subscriber's stack derives its address without referencing this stack, and its policy allows
 * `sqs:SendMessage` to exactly the subscribers' consumer roles (by their IAM path); no subscriber holds any grant on
 * the outbox.
 */
export class OutboxReceipts {
  /** The receipt queue and its dead-letter queue. */
  public readonly queue: QueueWithDlq;
  /** The function that applies receipts to the outbox. */
  public readonly function: OutboxFunction;

  constructor(outbox: OutboxScope, context: OutboxReceiptsContext) {
    const { scope } = outbox;
    this.queue = new QueueWithDlq(scope, 'ReceiptsQueue', {
      queueName: receiptQueueName(context.outboxName),
      encryptionKey: outbox.encryptionKey,
      // Six times the function's timeout, as AWS advises for a Lambda source.
      visibilityTimeout: Duration.seconds(180),
    });
    this.function = new OutboxFunction(scope, 'Receipts', {
      timeout: Duration.seconds(30),
      memorySize: 256,
      logGroupRemovalPolicy: outbox.removalPolicy,
      description: "Applies subscribers' receipts to the outbox: each confirms its message, once",
      entry: SHIPPED_ENTRIES.receipts,
      handler: 'handler',
      serviceName: 'outbox-receipts',
      metricsNamespace: outbox.metricsNamespace,
      environment: settingsEnvironment(RECEIPTS_SETTINGS, outbox.settings, outbox.report),
    });
    markOutboxRole(this.function, OutboxResourceRole.RECEIPTS);
    markOutboxRole(this.queue.queue, OutboxResourceRole.RECEIPT_QUEUE);
    this.function.addEventSource(
      queueEventSource(this.queue.queue, { batchSize: 10, maxBatchingWindow: Duration.seconds(1) }),
    );
    // The confirmation's attributes, and `topic`, which its condition reads (a receipt confirms only a delivery of
    // a topic its subscriber is declared for).
    grantLimitedUpdate(context.table, this.function, {
      attributes: [...new Set([...CONFIRMATION_ATTRIBUTES, 'topic'])].sort(),
      returnValues: [CONFIRMATION_RETURN_VALUES],
    });
    grantKeyUse(outbox.encryptionKey, this.function, 'write');
    allowReceiptsFrom(this.queue.queue, context);
    if (outbox.encryptionKey !== undefined) allowKeyUseBy(outbox.encryptionKey, context);
    context.monitoring.watchDeadLetters('receipts', this.queue.deadLetterQueue);
    context.monitoring.watchFunction(this.function);
  }
}
