/**
 * Snapshots of a drill's tables for the invariants' tests: one order, `o-1` (2 units of SKU A for customer `c-1`),
 * written as message `m-1` and delivered to inventory and loyalty, each delivery applied once and confirmed by its
 * own receipt; optionally cancelled too (`m-2`), released and revoked. Beside it, one rogue message `r-1` FAILED at
 * both subscribers. Tests change what they need with {@link withSubscriber} and spreads.
 */
import type { DrillSnapshot, SubscriberSnapshot } from '../../../infra/dev/drill/drill-snapshot.ts';
import type { Subscriber } from '../../../infra/dev/drill/drill-subscribers.ts';
import { NO_OPERATOR_ACTIONS } from '../../../infra/dev/drill/operator-actions.ts';
import { NO_RECEIPT_FAULTS } from '../../../infra/dev/drill/receipt-faults.ts';

/** When the order was written; the stop comes after it (so the order is outside the stop). */
export const WRITTEN_AT = '2030-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(WRITTEN_AT) + seconds * 1000).toISOString();

/** What each subscriber recorded for the create and the cancel. */
const OUTCOMES = {
  inventory: { created: 'APPLIED', cancelled: 'RELEASED' },
  loyalty: { created: 'AWARDED', cancelled: 'REVOKED' },
} as const;

/** A delivery row of message `messageId` (`topic`, `seq`) to `subscriber`, CONFIRMED by its receipt. */
export function deliveryRow(
  subscriber: Subscriber,
  message: {
    readonly messageId: string;
    readonly topic: string;
    readonly seq: number;
    readonly outcome: string;
  },
): Record<string, unknown> {
  const sentAt = at(message.seq);
  const confirmedAt = at(message.seq + 1);
  return {
    messageId: `${message.messageId}#${subscriber}`,
    subscriber,
    topic: message.topic,
    aggregateId: 'o-1',
    orderKey: `order#o-1#${subscriber}`,
    seq: message.seq,
    createdAt: WRITTEN_AT,
    status: 'CONFIRMED',
    attempts: 1,
    sentAt,
    confirmedAt,
    outcome: message.outcome,
    history: [
      { at: sentAt, event: 'SENT', from: 'PENDING', to: 'SENT', by: 'relay' },
      {
        at: confirmedAt,
        event: 'CONFIRMED',
        from: 'SENT',
        to: 'CONFIRMED',
        by: `receipt:${subscriber}`,
        outcome: message.outcome,
      },
    ],
  };
}

/** `subscriber`'s inbox row of its delivery of `messageId`. */
export function inboxRow(
  subscriber: Subscriber,
  message: {
    readonly messageId: string;
    readonly topic: string;
    readonly seq: number;
    readonly outcome: string;
  },
): Record<string, unknown> {
  return {
    messageId: `${message.messageId}#${subscriber}`,
    topic: message.topic,
    outcome: message.outcome,
    processedAt: new Date(Date.parse(at(message.seq + 1)) - 500).toISOString(),
  };
}

/** The rogue message's rows: FAILED at both subscribers with the reason a Set gives. */
export const rogueRows = (['inventory', 'loyalty'] as const).map((subscriber) => ({
  messageId: `r-1#${subscriber}`,
  subscriber,
  topic: 'order.created',
  aggregateId: 'rogue-set',
  status: 'FAILED',
  lastError: 'cannot be sent as stored: InvalidMessageError: payload.tags: a Set is not plain JSON',
}));

const created = (subscriber: Subscriber) => ({
  messageId: 'm-1',
  topic: 'order.created',
  seq: 1,
  outcome: OUTCOMES[subscriber].created,
});
const cancel = (subscriber: Subscriber) => ({
  messageId: 'm-2',
  topic: 'order.cancelled',
  seq: 2,
  outcome: OUTCOMES[subscriber].cancelled,
});

/** The order applied at both subscribers: 2 units of A taken and reserved, 20 points awarded, cursors at seq 1. */
export function placedOrder(): DrillSnapshot {
  const subscriber = (name: Subscriber): SubscriberSnapshot => ({
    inbox: [inboxRow(name, created(name))],
    cursors: [{ messageId: `cursor#order#o-1#${name}`, lastSeq: 1 }],
    parked: [],
    deadLetters: [],
  });
  return {
    orders: [{ orderId: 'o-1', customerId: 'c-1', status: 'PLACED', items: [{ sku: 'A', quantity: 2 }] }],
    outbox: [
      deliveryRow('inventory', created('inventory')),
      deliveryRow('loyalty', created('loyalty')),
      ...rogueRows,
    ],
    erasedLeft: [],
    subscribers: { inventory: subscriber('inventory'), loyalty: subscriber('loyalty') },
    inventory: [{ sku: 'A', available: 8 }],
    reservations: [{ sku: 'reservation#o-1', orderId: 'o-1' }],
    points: [{ pk: 'customer#c-1', customerId: 'c-1', points: 20 }],
    awards: [{ pk: 'award#o-1', orderId: 'o-1', customerId: 'c-1', points: 20, awardedAt: at(2) }],
    initialStock: new Map([['A', 10]]),
    poisonedOrders: new Set(),
    stalledOrders: new Set(),
    acknowledgedOrders: new Set(['o-1']),
    cancelledOrders: new Set(),
    hotOrders: new Set(),
    rogueMessages: new Map([['r-1', { kind: 'set', reason: /payload\.tags: a Set is not plain JSON/ }]]),
    maxReceiveCount: 5,
    operator: NO_OPERATOR_ACTIONS,
    receipts: NO_RECEIPT_FAULTS,
    stop: {
      subscriber: 'loyalty',
      running: 'inventory',
      stoppedAt: Date.parse(at(100)),
      plannedRestartAt: Date.parse(at(130)),
      restartedAt: Date.parse(at(150)),
      awaited: 0,
      openAtRestart: [],
    },
  };
}

/** The same order cancelled after both subscribers applied it: stock back, points revoked, cursors at seq 2. */
export function cancelledOrder(): DrillSnapshot {
  const placed = placedOrder();
  const subscriber = (name: Subscriber): SubscriberSnapshot => ({
    ...placed.subscribers[name],
    inbox: [inboxRow(name, created(name)), inboxRow(name, cancel(name))],
    cursors: [{ messageId: `cursor#order#o-1#${name}`, lastSeq: 2 }],
  });
  return {
    ...placed,
    orders: [{ ...placed.orders[0], status: 'CANCELLED' }],
    outbox: [
      ...placed.outbox.filter((row) => row.aggregateId === 'o-1'),
      deliveryRow('inventory', cancel('inventory')),
      deliveryRow('loyalty', cancel('loyalty')),
      ...rogueRows,
    ],
    subscribers: { inventory: subscriber('inventory'), loyalty: subscriber('loyalty') },
    inventory: [{ sku: 'A', available: 10 }],
    reservations: [],
    points: [{ pk: 'customer#c-1', customerId: 'c-1', points: 0 }],
    awards: [{ ...placed.awards[0], revokedAt: at(3) }],
    cancelledOrders: new Set(['o-1']),
  };
}

/** `snapshot` with `subscriber`'s tables changed as `changes` says. */
export function withSubscriber(
  snapshot: DrillSnapshot,
  subscriber: Subscriber,
  changes: Partial<SubscriberSnapshot>,
): DrillSnapshot {
  return {
    ...snapshot,
    subscribers: {
      ...snapshot.subscribers,
      [subscriber]: { ...snapshot.subscribers[subscriber], ...changes },
    },
  };
}

/** `snapshot` with the outbox row keyed `key` changed as `changes` says. */
export function withRow(
  snapshot: DrillSnapshot,
  key: string,
  changes: Record<string, unknown>,
): DrillSnapshot {
  return {
    ...snapshot,
    outbox: snapshot.outbox.map((row) => (row.messageId === key ? { ...row, ...changes } : row)),
  };
}
