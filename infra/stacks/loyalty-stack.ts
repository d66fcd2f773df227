import { CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { grantOnTable, OutboxSubscription, type OutboxSubscriptionSpec } from 'serverless-outbox/cdk';
import { LOYALTY_TABLE, LOYALTY_TABLE_KEY } from '../../functions/loyalty/loyalty-table.ts';
import { functionEntry, ServiceApi, type ServiceStackProps, serviceTable } from './service-api.ts';

/** Props of the {@link OutboxLoyaltyStack}. */
export interface OutboxLoyaltyStackProps extends ServiceStackProps {
  /** What the order service's outbox gives its subscriber `loyalty` (`subscriptionSpec('loyalty')`). */
  readonly orderEvents: OutboxSubscriptionSpec;
}

/**
 * The loyalty service: customers' points, and its subscription to the order service's events — it awards 10 points
 * per unit ordered on `order.created` and revokes exactly what an order awarded on `order.cancelled`, each once and
 * in each order's sequence, through its own inbox, whatever the inventory service decided (the services are
 * independent), and confirms each delivery by a receipt to the order service.
 */
export class OutboxLoyaltyStack extends Stack {
  /** The subscription: queue, dead-letter queue, inbox, consumer, alarms. */
  public readonly subscription: OutboxSubscription;
  /** The REST API: `GET /loyalty/{customerId}`. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: OutboxLoyaltyStackProps) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const loyalty = serviceTable(this, 'Points', { partitionKey: LOYALTY_TABLE_KEY, removalPolicy });

    this.subscription = new OutboxSubscription(this, 'Loyalty', {
      spec: props.orderEvents,
      entry: functionEntry('loyalty/apply-order/handler.ts'),
      functionProps: {
        description: 'order.created / order.cancelled → points: awarded and revoked exactly once, in order',
        environment: { [LOYALTY_TABLE]: loyalty.tableName },
      },
      removalPolicy,
    });
    // An order's award row is put once and marked revoked; a customer's points row is updated.
    grantOnTable(loyalty, this.subscription.function, ['dynamodb:PutItem', 'dynamodb:UpdateItem']);

    const service = new ServiceApi(this, {
      ...props,
      id: 'LoyaltyApi',
      removalPolicy,
      description: 'The loyalty service of the transactional outbox example',
    });
    this.api = service.api;
    const getPoints = service.function('GetPoints', 'loyalty/get-points/handler.ts', {
      [LOYALTY_TABLE]: loyalty.tableName,
    });
    grantOnTable(loyalty, getPoints, ['dynamodb:GetItem']);
    const customerResource = this.api.root.addResource('loyalty').addResource('{customerId}');
    service.route(customerResource, 'GET', { target: getPoints, pathParameters: ['customerId'] });
    service.harden();

    const outputs = {
      loyaltyTableName: loyalty.tableName,
      loyaltyInboxTableName: this.subscription.inboxTable.tableName,
      loyaltyQueueUrl: this.subscription.queue.queue.queueUrl,
      loyaltyDeadLetterQueueUrl: this.subscription.queue.deadLetterQueue.queueUrl,
      loyaltyApiUrl: this.api.url,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });
  }
}
