/**
 * The routes of the example's order and inventory services, with their functions, grants and request models: what the
 * order service's and the inventory service's stacks add to their APIs (and what a one-stack app of both adds to its
 * one API).
 */
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { grantOnTable, type TransactionalOutbox } from 'serverless-outbox/cdk';
import { stockRequestSchema } from '../../functions/inventory/put-stock/stock-request.ts';
import { cancelOrderRequestSchema } from '../../functions/orders/cancel-order/cancel-request.ts';
import { orderRequestSchema } from '../../functions/orders/create-order/order-request.ts';
import type { ServiceApi } from './service-api.ts';

/**
 * `POST /orders`, `GET /orders/{orderId}` and `POST /orders/{orderId}/cancel` on `service`'s API: the functions that
 * write an order (and its cancellation) with its message through `outbox`, and read it with its messages.
 */
export function addOrderRoutes(
  service: ServiceApi,
  context: { readonly orders: dynamodb.ITable; readonly outbox: TransactionalOutbox },
): void {
  const { orders, outbox } = context;
  const createOrder = service.function('CreateOrder', 'orders/create-order/handler.ts', {
    ORDERS_TABLE: orders.tableName,
  });
  grantOnTable(orders, createOrder, ['dynamodb:PutItem']);
  outbox.bindWriter(createOrder);
  const cancelOrder = service.function('CancelOrder', 'orders/cancel-order/handler.ts', {
    ORDERS_TABLE: orders.tableName,
  });
  // Reads the order's lines, then updates its status with the message in one transaction.
  grantOnTable(orders, cancelOrder, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
  outbox.bindWriter(cancelOrder);
  const getOrder = service.function('GetOrder', 'orders/get-order/handler.ts', {
    ORDERS_TABLE: orders.tableName,
  });
  grantOnTable(orders, getOrder, ['dynamodb:GetItem']);
  outbox.bindReader(getOrder);

  const ordersResource = service.api.root.addResource('orders');
  service.route(ordersResource, 'POST', {
    target: createOrder,
    body: { name: 'createOrder', schema: orderRequestSchema },
  });
  const orderResource = ordersResource.addResource('{orderId}');
  service.route(orderResource, 'GET', { target: getOrder, pathParameters: ['orderId'] });
  // No body, or `{}`: API Gateway validates a missing body as `{}`, and the handler accepts both.
  service.route(orderResource.addResource('cancel'), 'POST', {
    target: cancelOrder,
    pathParameters: ['orderId'],
    body: { name: 'cancelOrder', schema: cancelOrderRequestSchema },
  });
}

/** `PUT /inventory/{sku}` and `GET /inventory/{sku}` on `service`'s API, over the `inventory` table. */
export function addStockRoutes(service: ServiceApi, context: { readonly inventory: dynamodb.ITable }): void {
  const { inventory } = context;
  const putStock = service.function('PutStock', 'inventory/put-stock/handler.ts', {
    INVENTORY_TABLE: inventory.tableName,
  });
  grantOnTable(inventory, putStock, ['dynamodb:PutItem']);
  const getStock = service.function('GetStock', 'inventory/get-stock/handler.ts', {
    INVENTORY_TABLE: inventory.tableName,
  });
  grantOnTable(inventory, getStock, ['dynamodb:GetItem']);
  const skuResource = service.api.root.addResource('inventory').addResource('{sku}');
  service.route(skuResource, 'PUT', {
    target: putStock,
    pathParameters: ['sku'],
    body: { name: 'putStock', schema: stockRequestSchema },
  });
  service.route(skuResource, 'GET', { target: getStock, pathParameters: ['sku'] });
}
