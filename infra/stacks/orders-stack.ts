import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { TransactionalOutbox } from 'serverless-outbox/cdk';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../functions/orders/order.ts';
import { ServiceApi, type ServiceStackProps, serviceTable } from './service-api.ts';
import { addOrderRoutes } from './service-routes.ts';

/** The subscribers of the order service's events: each a service of its own, in its own stack. */
export const ORDER_SUBSCRIBERS = { inventory: 'inventory', loyalty: 'loyalty' } as const;

/** Props of the {@link OutboxOrdersStack}. */
export interface OutboxOrdersStackProps extends ServiceStackProps {
  /**
   * Deliver the order events to each subscriber through a FIFO queue (and a FIFO dead-letter queue): each order's
   * messages in one message group, so SQS itself delivers an order's cancellation after its creation in the common
   * case. Each consumer keeps each order's sequence either way; FIFO only makes reordering, and so parking, rare —
   * at FIFO's throughput limits.
   * @default false - standard queues
   */
  readonly fifo?: boolean;
}

/**
 * The order service: writes each order and its `order.created` message in one transaction (and a cancellation with
 * its `order.cancelled`), shows an order with each message's delivery to each subscriber, and owns the
 * {@link TransactionalOutbox} that delivers both events to its subscribers `inventory` and `loyalty` — services
 * of their own, in their own stacks, which it never reads or writes — and that applies their receipts. Its REST
 * API serves `/orders` and the outbox's IAM-authorised `/admin`.
 */
export class OutboxOrdersStack extends Stack {
  /** The outbox the order service writes its events to. */
  public readonly outbox: TransactionalOutbox;
  /** The REST API: orders (authorised as `apiAuthorization` says) and the IAM-authorised `/admin`. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: OutboxOrdersStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const orders = serviceTable(this, 'Orders', { partitionKey: 'orderId', removalPolicy });
    const topics = [ORDER_CREATED, ORDER_CANCELLED];
    const fifo = props.fifo === true;

    this.outbox = new TransactionalOutbox(this, 'Outbox', {
      // Both events to both subscribers: each one's delivery is a row of its own, sent, retried, resent and
      // confirmed (by the subscriber's receipt) on its own.
      subscribers: {
        [ORDER_SUBSCRIBERS.inventory]: { topics, fifo },
        [ORDER_SUBSCRIBERS.loyalty]: { topics, fifo },
      },
      // An order's cancellation applies after its creation, never before, at each subscriber: one sequence, scope
      // `order`, numbered by the order's own version (1 at create, 2 at cancel, under a condition), so no sequence
      // table is needed.
      ordering: {
        [ORDER_CREATED]: { scope: 'order', sequence: 'aggregate-version' },
        [ORDER_CANCELLED]: { scope: 'order', sequence: 'aggregate-version' },
      },
      removalPolicy,
    });

    const service = new ServiceApi(this, {
      ...props,
      id: 'OrdersApi',
      removalPolicy,
      description: 'The order service of the transactional outbox example, and its outbox operations',
    });
    this.api = service.api;
    addOrderRoutes(service, { orders, outbox: this.outbox });
    // Operations under /admin, IAM-authorised only: list, show, replay, cancel, stats, erase, skip.
    this.outbox.addAdminApi(this.api);
    service.harden();

    // Named outputs (created on the stack, so each logical id is exactly the name) for tools and tests; every
    // name is unique across the example's stacks.
    const receipts = this.outbox.receipts;
    if (receipts === undefined) throw new Error('an outbox with subscribers has a receipt queue');
    const outputs = {
      ordersTableName: orders.tableName,
      outboxTableName: this.outbox.table.tableName,
      outboxName: this.outbox.outboxName,
      receiptQueueUrl: receipts.queue.queue.queueUrl,
      relayFailureQueueUrl: this.outbox.failureQueue.queueUrl,
      ordersApiUrl: this.api.url,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });
  }
}
