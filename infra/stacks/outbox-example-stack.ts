import { fileURLToPath } from 'node:url';
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { grantOnTable, OutboxFunction, TABLE_DEFAULTS, TransactionalOutbox } from 'serverless-outbox/cdk';
import { stockRequestSchema } from '../../functions/inventory/put-stock/stock-request.ts';
import { cancelOrderRequestSchema } from '../../functions/orders/cancel-order/cancel-request.ts';
import { orderRequestSchema } from '../../functions/orders/create-order/order-request.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../functions/orders/order.ts';
import { type ApiAuthorization, ApiAuthorizationKind, methodAuthorization } from './api-authorization.ts';
import { type ApiEdgeProps, apiEdgeRestApiProps, corsAllowOrigin, hardenApiEdge } from './api-edge.ts';
import { acknowledgeExampleNagFindings } from './example-nag-suppressions.ts';
import { requestModelSchema } from './request-model-schema.ts';

/** A handler module of the example, by its path in the repository. */
const entry = (path: string): string => fileURLToPath(new URL(`../../functions/${path}`, import.meta.url));

/** Props of the {@link OutboxExampleStack}. */
export interface OutboxExampleStackProps extends StackProps {
  /**
   * What happens to tables and log groups when they leave the stack.
   * @default RemovalPolicy.DESTROY - an example that `cdk destroy` removes completely
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Who may call the orders and inventory routes. `/admin` is AWS_IAM whatever this says.
   * @default ApiAuthorization.iam() - SigV4-signed requests from principals allowed `execute-api:Invoke`
   */
  readonly apiAuthorization?: ApiAuthorization;
  /**
   * The API's edge: access and execution logs, the account's CloudWatch role, throttling, WAF, CORS.
   * @default - see `API_EDGE_DEFAULTS`: logs kept a month, no CloudWatch role, 100 rps / 200 burst
   */
  readonly apiEdge?: ApiEdgeProps;
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
 * The example: an order service that writes each order and its `order.created` message in one transaction
 * (and a cancellation with its `order.cancelled`), and an inventory service that reserves stock exactly once
 * per order and releases it on cancellation, in each order's sequence; joined by a
 * {@link TransactionalOutbox}, with the outbox's admin API under `/admin` of the same REST API.
 */
export class OutboxExampleStack extends Stack {
  /** The outbox between the two services. */
  public readonly outbox: TransactionalOutbox;
  /** The REST API: orders, inventory (authorised as `apiAuthorization` says) and the IAM-authorised `/admin`. */
  public readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: OutboxExampleStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const table = (tableId: string, partitionKey: string) =>
      new dynamodb.Table(this, tableId, {
        partitionKey: { name: partitionKey, type: dynamodb.AttributeType.STRING },
        billingMode: TABLE_DEFAULTS.billingMode,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
        removalPolicy,
      });
    const orders = table('Orders', 'orderId');
    const inventory = table('Inventory', 'sku');

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
      entry: entry('inventory/apply-order/handler.ts'),
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

    // With CORS for one origin, the handlers name it on their answers as the gateway does on its own.
    const allowOrigin = corsAllowOrigin(props.apiEdge?.cors);
    const fn = (functionId: string, path: string, environment: Record<string, string>) =>
      new OutboxFunction(this, functionId, {
        entry: entry(path),
        environment: {
          ...environment,
          ...(allowOrigin === undefined ? {} : { CORS_ALLOW_ORIGIN: allowOrigin }),
        },
        logGroupRemovalPolicy: removalPolicy,
      });
    const createOrder = fn('CreateOrder', 'orders/create-order/handler.ts', {
      ORDERS_TABLE: orders.tableName,
    });
    grantOnTable(orders, createOrder, ['dynamodb:PutItem']);
    this.outbox.bindWriter(createOrder);
    const cancelOrder = fn('CancelOrder', 'orders/cancel-order/handler.ts', {
      ORDERS_TABLE: orders.tableName,
    });
    // Reads the order's lines, then updates its status with the message in one transaction.
    grantOnTable(orders, cancelOrder, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    this.outbox.bindWriter(cancelOrder);
    const getOrder = fn('GetOrder', 'orders/get-order/handler.ts', { ORDERS_TABLE: orders.tableName });
    grantOnTable(orders, getOrder, ['dynamodb:GetItem']);
    this.outbox.bindReader(getOrder);
    const putStock = fn('PutStock', 'inventory/put-stock/handler.ts', {
      INVENTORY_TABLE: inventory.tableName,
    });
    grantOnTable(inventory, putStock, ['dynamodb:PutItem']);
    const getStock = fn('GetStock', 'inventory/get-stock/handler.ts', {
      INVENTORY_TABLE: inventory.tableName,
    });
    grantOnTable(inventory, getStock, ['dynamodb:GetItem']);

    const edge = props.apiEdge ?? {};
    this.api = new apigateway.RestApi(this, 'Api', {
      restApiName: `${this.stackName}-api`,
      description: 'Orders and inventory of the transactional outbox example',
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      ...apiEdgeRestApiProps(this, { edge, removalPolicy }),
    });
    // Every business route gets the same authorisation, given per method (not as the API's default method
    // options): /admin sets AWS_IAM, which an inherited Cognito or Lambda authorizer would contradict.
    const authorized = methodAuthorization(
      this,
      props.apiAuthorization ?? { kind: ApiAuthorizationKind.IAM },
    );
    const validator = this.api.addRequestValidator('RequestValidator', {
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    const withPath = (parameter: string) => ({
      requestValidator: validator,
      requestParameters: { [`method.request.path.${parameter}`]: true },
    });
    const withBody = (name: string, schema: Parameters<typeof requestModelSchema>[0]) => ({
      requestValidator: validator,
      requestModels: {
        'application/json': this.api.addModel(`${name}Request`, {
          contentType: 'application/json',
          modelName: `${name}Request`,
          schema: requestModelSchema(schema),
        }),
      },
    });
    const integration = (target: lambda.IFunction) => new apigateway.LambdaIntegration(target);
    const ordersResource = this.api.root.addResource('orders');
    ordersResource.addMethod('POST', integration(createOrder), {
      ...authorized,
      ...withBody('createOrder', orderRequestSchema),
    });
    const orderResource = ordersResource.addResource('{orderId}');
    orderResource.addMethod('GET', integration(getOrder), { ...authorized, ...withPath('orderId') });
    // No body, or `{}`: API Gateway validates a missing body as `{}`, and the handler accepts both.
    orderResource.addResource('cancel').addMethod('POST', integration(cancelOrder), {
      ...authorized,
      ...withPath('orderId'),
      ...withBody('cancelOrder', cancelOrderRequestSchema),
    });
    const skuResource = this.api.root.addResource('inventory').addResource('{sku}');
    skuResource.addMethod('PUT', integration(putStock), {
      ...authorized,
      ...withPath('sku'),
      ...withBody('putStock', stockRequestSchema),
    });
    skuResource.addMethod('GET', integration(getStock), { ...authorized, ...withPath('sku') });
    // Operations under /admin, IAM-authorised only: list, show, replay, cancel, redrive, stats, erase.
    this.outbox.addAdminApi(this.api);
    // Logs with retention, JSON gateway responses that never carry internal errors, the web ACL.
    hardenApiEdge(this, { api: this.api, edge, removalPolicy });
    // cdk-nag findings of the example's own API and functions that are its design, with their reasons.
    acknowledgeExampleNagFindings(this, this.api);

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
