import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { grantOnTable, TransactionalOutbox } from 'serverless-outbox/cdk';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../functions/orders/order.ts';
import {
  functionEntry,
  ServiceApi,
  type ServiceStackProps,
  serviceTable,
} from '../../infra/stacks/service-api.ts';
import { addOrderRoutes, addStockRoutes } from '../../infra/stacks/service-routes.ts';

/** Props of the {@link SingleQueueExampleStack}. */
export interface SingleQueueExampleStackProps extends ServiceStackProps {
  /**
   * Send the order events through a FIFO queue (and a FIFO dead-letter queue): each order's messages in one
   * message group, so SQS itself delivers an order's cancellation after its creation in the common case. The
   * consumer keeps each order's sequence either way; FIFO only makes reordering, and so parking, rare — at
   * FIFO's throughput limits.
   * @default false - a standard queue
   */
  readonly fifo?: boolean;
}

/**
 * The example as it was before its services had stacks of their own, kept for the tests of the outbox's other
 * shape: one stack, one topic queue (`queues`) and one consumer added with `addConsumer`, which confirms in the
 * outbox and which the sweeper reconciles through its inbox. An order service that writes each order and its
 * `order.created` message in one transaction (and a cancellation with its `order.cancelled`), and an inventory
 * service that reserves stock exactly once per order and releases it on cancellation, in each order's sequence;
 * joined by a {@link TransactionalOutbox}, with the outbox's admin API under `/admin` of the same REST API. The
 * same functions as the example's.
 */
export class SingleQueueExampleStack extends Stack {
  /** The outbox between the two services. */
  public readonly outbox: TransactionalOutbox;
  /** The REST API: orders, inventory (authorised as `apiAuthorization` says) and the IAM-authorised `/admin`. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: SingleQueueExampleStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const orders = serviceTable(this, 'Orders', { partitionKey: 'orderId', removalPolicy });
    const inventory = serviceTable(this, 'Inventory', { partitionKey: 'sku', removalPolicy });

    this.outbox = new TransactionalOutbox(this, 'Outbox', {
      // A standard queue by default: the consumer applies an order's messages in sequence, however they arrive.
      queues: { orderEvents: { topics: [ORDER_CREATED, ORDER_CANCELLED], fifo: props.fifo === true } },
      // An order's cancellation applies after its creation, never before: one sequence, scope `order`, numbered by
      // the order's own version (1 at create, 2 at cancel, under a condition), so no sequence table is needed.
      ordering: {
        [ORDER_CREATED]: { scope: 'order', sequence: 'aggregate-version' },
        [ORDER_CANCELLED]: { scope: 'order', sequence: 'aggregate-version' },
      },
      removalPolicy,
    });

    // The inventory service: applies each order.created and order.cancelled once, with its inbox row, in one
    // transaction, and an order's two in their sequence.
    const inventoryConsumer = this.outbox.addConsumer('InventoryConsumer', {
      queue: 'orderEvents',
      entry: functionEntry('inventory/apply-order/handler.ts'),
      functionProps: {
        description:
          'order.created / order.cancelled → stock: each applied exactly once, in order, through the inbox',
        environment: { INVENTORY_TABLE: inventory.tableName },
      },
    });
    // Stock moves (UpdateItem); an order's reservation row is put on reservation and deleted on release.
    grantOnTable(inventory, inventoryConsumer.function, [
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ]);

    const service = new ServiceApi(this, {
      ...props,
      removalPolicy,
      description: 'Orders and inventory of the transactional outbox example',
    });
    this.api = service.api;
    addOrderRoutes(service, { orders, outbox: this.outbox });
    addStockRoutes(service, { inventory });
    // Operations under /admin, IAM-authorised only: list, show, replay, cancel, redrive, stats, erase.
    this.outbox.addAdminApi(this.api);
    service.harden();

    // Named outputs (created on the stack, so each logical id is exactly the name) for tools and tests.
    const outputs = {
      ordersTableName: orders.tableName,
      inventoryTableName: inventory.tableName,
      outboxTableName: this.outbox.table.tableName,
      inboxTableName: inventoryConsumer.inboxTable.tableName,
      orderEventsQueueUrl: inventoryConsumer.queue.queue.queueUrl,
      orderEventsDeadLetterQueueUrl: inventoryConsumer.queue.deadLetterQueue.queueUrl,
      relayFailureQueueUrl: this.outbox.failureQueue.queueUrl,
      apiUrl: this.api.url,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });
  }
}
