/**
 * The subscribers the fan-out bench delivers to, each a service of its own: its inbox table, its business table, its
 * plan and conflict keys, and how to read from its rows how many orders it applied. Inventory is the example's
 * service; loyalty and the others record what each order adds to its customer (loyalty: 10 points a unit).
 */
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { stockConflictKeys } from '../../../functions/inventory/apply-order/stock-conflict-keys.ts';
import { ORDER_CREATED, type Order } from '../../../functions/orders/order.ts';
import { type PlanEffect, PoisonMessageError } from '../../../shared/index.ts';
import type { ConflictKeys } from '../../../shared/lambda/index.ts';
import { INBOX_KEYS, type MemoryTableSchema } from '../../../shared/memory/index.ts';
import { EXAMPLE_TABLES } from './example-pipeline.ts';

/** The subscribers a run takes the first 1, 2 or 5 of: the example's two, then three of loyalty's shape. */
export const FAN_OUT_SUBSCRIBERS = ['inventory', 'loyalty', 'shipping', 'billing', 'analytics'] as const;

/** Units of stock each SKU starts with: more than any run takes. */
export const STOCK = 1_000;

/** What a subscriber of loyalty's shape records per unit ordered (loyalty awards 10 points a unit). */
const UNITS_PER_QUANTITY: Readonly<Record<string, number>> = { loyalty: 10 };

/** The inbox table of `subscriber`: each subscriber's stack has its own. */
export const inboxTableOf = (subscriber: string) => `${subscriber}-inbox`;

/** The business table of `subscriber`: inventory's is the example's `inventory`, the others are named after theirs. */
export const businessTableOf = (subscriber: string) => subscriber;

/**
 * The producer's tables (orders, outbox with its indexes as deployed, sequences) and each subscriber's inbox and
 * business table (inventory's is the example's; the others are keyed `id`).
 */
export function fanOutTables(subscribers: readonly string[]): Record<string, MemoryTableSchema> {
  const { inbox: _inbox, ...producer } = EXAMPLE_TABLES;
  return {
    ...producer,
    ...Object.fromEntries(
      subscribers.flatMap((subscriber) => [
        [inboxTableOf(subscriber), { partitionKey: INBOX_KEYS.partitionKey }],
        ...(subscriber === 'inventory' ? [] : [[businessTableOf(subscriber), { partitionKey: 'id' }]]),
      ]),
    ),
  };
}

/**
 * What `subscriber` does with an `order.created`: inventory runs the example's plan (reserve the stock, keep the
 * reservation); the others add the order's units to the customer's row and keep a row of what this order added
 * (what a cancellation would take back). Their inbox is what keeps a copy from applying twice.
 */
export function subscriberPlan(subscriber: string): PlanEffect {
  if (subscriber === 'inventory') return planInventory(businessTableOf(subscriber), () => new Date());
  const perQuantity = UNITS_PER_QUANTITY[subscriber] ?? 1;
  return (message) => {
    if (message.topic !== ORDER_CREATED) {
      throw new PoisonMessageError(
        `the bench's ${subscriber} reads ${ORDER_CREATED} only, not ${message.topic}`,
      );
    }
    const order = message.payload as Order;
    const units = order.items.reduce((sum, item) => sum + item.quantity, 0) * perQuantity;
    return {
      apply: [
        {
          Update: {
            TableName: businessTableOf(subscriber),
            Key: { id: `customer#${order.customerId}` },
            UpdateExpression: 'ADD #units :units, #orders :one',
            ExpressionAttributeNames: { '#units': 'units', '#orders': 'orders' },
            ExpressionAttributeValues: { ':units': units, ':one': 1 },
          },
        },
        {
          Put: {
            TableName: businessTableOf(subscriber),
            Item: { id: `order#${order.orderId}`, customerId: order.customerId, units },
          },
        },
      ],
      // Neither action has a condition: this outcome is never recorded.
      onConditionFailure: 'NOT_RECORDED',
      outcome: subscriber === 'loyalty' ? 'AWARDED' : 'RECORDED',
    };
  };
}

/** The items a message touches for `subscriber`: inventory's SKUs, another subscriber's customer row. */
export function subscriberConflictKeys(subscriber: string): ConflictKeys {
  if (subscriber === 'inventory') return stockConflictKeys;
  return (message) => {
    const customerId = (message.payload as Partial<Order> | undefined)?.customerId;
    return [typeof customerId === 'string' ? `customer:${customerId}` : `message:${message.messageId}`];
  };
}

/** How many orders a subscriber applied, two ways: its per-order rows, and the sum its counters moved by. */
export interface AppliedOrders {
  readonly orders: number;
  readonly counted: number;
}

/**
 * Reads {@link AppliedOrders} from `subscriber`'s business rows: inventory's reservations and the stock it took
 * (one unit an order), another subscriber's per-order rows and its customers' order counters.
 */
export function appliedOrders(subscriber: string, rows: readonly Record<string, unknown>[]): AppliedOrders {
  if (subscriber === 'inventory') {
    return {
      orders: rows.filter((row) => String(row.sku).startsWith('reservation')).length,
      counted: rows
        .filter((row) => typeof row.available === 'number')
        .reduce((sum, row) => sum + (STOCK - Number(row.available)), 0),
    };
  }
  return {
    orders: rows.filter((row) => String(row.id).startsWith('order#')).length,
    counted: rows
      .filter((row) => String(row.id).startsWith('customer#'))
      .reduce((sum, row) => sum + Number(row.orders), 0),
  };
}
