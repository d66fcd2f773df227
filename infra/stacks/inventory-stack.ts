import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { grantOnTable, OutboxSubscription, type OutboxSubscriptionSpec } from 'serverless-outbox/cdk';
import { functionEntry, ServiceApi, type ServiceStackProps, serviceTable } from './service-api.ts';
import { addStockRoutes } from './service-routes.ts';

/** Props of the {@link OutboxInventoryStack}. */
export interface OutboxInventoryStackProps extends ServiceStackProps {
  /** What the order service's outbox gives its subscriber `inventory` (`subscriptionSpec('inventory')`). */
  readonly orderEvents: OutboxSubscriptionSpec;
}

/**
 * The inventory service: its stock, and its subscription to the order service's events — it reserves stock exactly
 * once per order and releases it on cancellation, in each order's sequence, through its own inbox, and confirms
 * each delivery by a receipt to the order service. It holds no grant on any table of the order service.
 */
export class OutboxInventoryStack extends Stack {
  /** The subscription: queue, dead-letter queue, inbox, consumer, alarms. */
  public readonly subscription: OutboxSubscription;
  /** The REST API: `PUT/GET /inventory/{sku}`. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: OutboxInventoryStackProps) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const inventory = serviceTable(this, 'Stock', { partitionKey: 'sku', removalPolicy });

    // Applies each order.created and order.cancelled once, with its inbox row, in one transaction, and an order's
    // two in their sequence.
    this.subscription = new OutboxSubscription(this, 'Inventory', {
      spec: props.orderEvents,
      entry: functionEntry('inventory/apply-order/handler.ts'),
      functionProps: {
        description:
          'order.created / order.cancelled → stock: each applied exactly once, in order, through the inbox',
        environment: { INVENTORY_TABLE: inventory.tableName },
      },
      removalPolicy,
    });
    // Stock moves (UpdateItem); an order's reservation row is put on reservation and deleted on release.
    grantOnTable(inventory, this.subscription.function, [
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      'dynamodb:DeleteItem',
    ]);

    const service = new ServiceApi(this, {
      ...props,
      id: 'InventoryApi',
      removalPolicy,
      description: 'The inventory service of the transactional outbox example',
    });
    this.api = service.api;
    addStockRoutes(service, { inventory });
    service.harden();

    const outputs = {
      inventoryTableName: inventory.tableName,
      inventoryInboxTableName: this.subscription.inboxTable.tableName,
      inventoryQueueUrl: this.subscription.queue.queue.queueUrl,
      inventoryDeadLetterQueueUrl: this.subscription.queue.deadLetterQueue.queueUrl,
      inventoryApiUrl: this.api.url,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });
  }
}
