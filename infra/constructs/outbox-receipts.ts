import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { CONFIRMATION_ATTRIBUTES, CONFIRMATION_RETURN_VALUES } from '../../shared/aws/outbox-table.ts';
import { subscriberNameSchema } from '../../shared/receipts/receipt.ts';
import { RECEIPTS_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxMonitoring } from './outbox-monitoring.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { QueueWithDlq } from './queue-with-dlq.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
import { grantLimitedUpdate, grantSendMessage, queueEventSource } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** What the receipts function is wired to. */
export interface OutboxReceiptsContext {
  readonly table: dynamodb.ITable;
  readonly monitoring: OutboxMonitoring;
}

/**
 * The producer's side of receipts: a receipt queue (with its dead-letter queue) that subscribers send to, and the
 * receipts function that confirms each receipt's message in the outbox. Created with the first consumer that
 * confirms by receipt; each such consumer is declared here with its subscriber name and topics, and gets
 * `sqs:SendMessage` on the receipt queue instead of any grant on the outbox.
 */
export class OutboxReceipts {
  /** The receipt queue and its dead-letter queue. */
  public readonly queue: QueueWithDlq;
  /** The function that applies receipts to the outbox. */
  public readonly function: OutboxFunction;

  /** Subscriber → the topics it receives (RECEIPT_SUBSCRIBERS, resolved at synth). */
  readonly #subscribers = new Map<string, string[]>();
  readonly #outbox: OutboxScope;

  constructor(outbox: OutboxScope, context: OutboxReceiptsContext) {
    this.#outbox = outbox;
    const { scope } = outbox;
    this.queue = new QueueWithDlq(scope, 'ReceiptsQueue', {
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
      environment: settingsEnvironment(
        RECEIPTS_SETTINGS,
        {
          ...outbox.settings,
          // Consumers added later declare their subscribers, so this is resolved at synth.
          receiptSubscribers: {
            text: Lazy.string({
              produce: () => Stack.of(scope).toJsonString(Object.fromEntries(this.#subscribers)),
            }),
          },
        },
        outbox.report,
      ),
    });
    markOutboxRole(this.function, OutboxResourceRole.RECEIPTS);
    markOutboxRole(this.queue.queue, OutboxResourceRole.RECEIPT_QUEUE);
    this.function.addEventSource(
      queueEventSource(this.queue.queue, { batchSize: 10, maxBatchingWindow: Duration.seconds(1) }),
    );
    // The confirmation's attributes, and `topic`, which its condition reads (a receipt confirms only a message of
    // a topic its subscriber is declared for).
    grantLimitedUpdate(context.table, this.function, {
      attributes: [...new Set([...CONFIRMATION_ATTRIBUTES, 'topic'])].sort(),
      returnValues: [CONFIRMATION_RETURN_VALUES],
    });
    grantKeyUse(outbox.encryptionKey, this.function, 'write');
    context.monitoring.watchDeadLetters('receipts', this.queue.deadLetterQueue);
    context.monitoring.watchFunction(this.function);
  }

  /**
   * Declares consumer `id` as `subscriber` of `topics`: the receipts function accepts its receipts for those
   * topics, and `sender` may send to the receipt queue. A topic has one subscriber until deliveries are kept per
   * subscriber; a second one is refused at synth.
   */
  addSubscriber(
    sender: iam.IGrantable,
    declared: { readonly id: string; readonly subscriber: string; readonly topics: readonly string[] },
  ): void {
    const { id, subscriber, topics } = declared;
    if (!subscriberNameSchema.safeParse(subscriber).success) {
      this.#outbox.report(
        `consumer ${id}: subscriber '${subscriber}' must be a lowercase name of at most 40 letters, digits and -, e.g. inventory`,
      );
    }
    if (this.#subscribers.has(subscriber)) {
      this.#outbox.report(
        `consumer ${id}: subscriber '${subscriber}' is declared by another consumer already`,
      );
    }
    for (const [other, theirs] of this.#subscribers) {
      const shared = topics.filter((topic) => theirs.includes(topic));
      if (shared.length > 0) {
        this.#outbox.report(
          `consumer ${id}: topic ${shared.join(', ')} already has subscriber '${other}' confirming by receipt; ` +
            'each topic has one until deliveries are kept per subscriber',
        );
      }
    }
    this.#subscribers.set(subscriber, [...topics]);
    grantSendMessage(this.queue.queue, sender);
  }
}
