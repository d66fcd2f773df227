import { ORDER_CANCELLED, ORDER_CREATED, OrderStatus } from '../../../functions/orders/order.ts';
import { gatherDeliveries, MessageStatus, orderKeyOf } from '../../../shared/index.ts';
import { cursorKeyOf } from '../../../shared/memory/index.ts';
import type { DrillSnapshot, OrderMessage, OutboxIndex } from './drill-snapshot.ts';
import {
  deliveryKey,
  messageIdOfDelivery,
  SUBSCRIBERS,
  type Subscriber,
  subscriberOrderKey,
} from './drill-subscribers.ts';
import { SUBSCRIBER_OUTCOMES } from './inbox-outcomes.ts';
import { type InvariantResult, quoted, verdict } from './invariant-result.ts';
import { ORDER_SCOPE } from './order-factory.ts';
import type { Stall } from './stalled-deliveries.ts';

/** What the delivery invariants read: the snapshot, and the views of it every check shares. */
export interface DeliveryView {
  readonly snapshot: DrillSnapshot;
  readonly index: OutboxIndex;
  /** Deliveries that wait, as designed, behind a FAILED seq 1 in their subscriber's sequence. */
  readonly stalled: ReadonlyMap<string, Stall>;
  /** Each subscriber's inbox rows by key (`<messageId>#<subscriber>`). */
  readonly inboxes: Readonly<Record<Subscriber, ReadonlyMap<string, Record<string, unknown>>>>;
}

/** What `subscriber` recorded for its delivery of `message`; undefined when it has not applied it. */
export function outcomeAt(
  view: DeliveryView,
  message: OrderMessage | undefined,
  subscriber: Subscriber,
): unknown {
  return message === undefined
    ? undefined
    : view.inboxes[subscriber].get(deliveryKey(message.messageId, subscriber))?.outcome;
}

/** Whether SQS refuses `subscriber`'s delivery of `message` forever (and no operator fixed and replayed it). */
export function isPoisonedAt(view: DeliveryView, message: OrderMessage, subscriber: Subscriber): boolean {
  const { snapshot } = view;
  return (
    !snapshot.operator.replayed.has(deliveryKey(message.messageId, subscriber)) &&
    (snapshot.poisonedOrders.has(message.orderId) ||
      (snapshot.stalledOrders.has(message.orderId) && message.topic === ORDER_CREATED))
  );
}

/** Whether the operator's actions are why `subscriber`'s delivery of `message` is CANCELLED: a cancel, or a skip. */
function isCancelledByOperator(view: DeliveryView, message: OrderMessage, subscriber: Subscriber): boolean {
  const { operator } = view.snapshot;
  return (
    operator.cancelled.has(deliveryKey(message.messageId, subscriber)) ||
    (message.topic === ORDER_CREATED && operator.skipped.has(`${message.orderId}#${subscriber}`))
  );
}

/**
 * Checks, from the outbox and each subscriber's inbox table alone, that every message reached every subscriber as
 * the product promises: each written with a delivery row per subscriber, none lost, each applied once at its
 * subscriber and in its order's sequence there, a poisoned aggregate stalling alone at each subscriber, a skipped
 * gap releasing what waited behind it, and no cursor or parked row out of step.
 */
export function checkDeliveries(view: DeliveryView): InvariantResult[] {
  return [
    written(view),
    noneLost(view),
    derivedStatus(view),
    stallsAlone(view),
    skippedGaps(view),
    appliedOnce(view),
    appliedInOrder(view),
    cursors(view),
    parkedRows(view),
  ];
}

function written({ snapshot, index }: DeliveryView): InvariantResult {
  const ordersById = new Map(snapshot.orders.map((order) => [String(order.orderId), order]));
  let deliveries = 0;
  const failures = [...snapshot.acknowledgedOrders].flatMap((orderId) => {
    const order = ordersById.get(orderId);
    if (order === undefined) return [`order ${orderId} acknowledged but missing`];
    const cancelled = snapshot.cancelledOrders.has(orderId);
    const expected: [topic: string, seq: number][] = [[ORDER_CREATED, 1]];
    if (cancelled) expected.push([ORDER_CANCELLED, 2]);
    const messages = index.byOrder.get(orderId) ?? [];
    const problems: string[] = [];
    if (messages.length !== expected.length)
      problems.push(`order ${orderId} has ${messages.length} messages, not ${expected.length}`);
    for (const [topic, seq] of expected) {
      const message = messages.find((candidate) => candidate.topic === topic);
      if (message === undefined) {
        problems.push(`order ${orderId} has no ${topic}`);
        continue;
      }
      for (const subscriber of SUBSCRIBERS) {
        const row = message.deliveries.get(subscriber);
        const orderKey = subscriberOrderKey(orderKeyOf(ORDER_SCOPE, orderId), subscriber);
        if (row === undefined) problems.push(`order ${orderId}'s ${topic} has no delivery to ${subscriber}`);
        else if (row.orderKey !== orderKey || row.seq !== seq) {
          problems.push(
            `${String(row.messageId)} is seq ${String(row.seq)} of ${String(row.orderKey)}, not ${seq} of ${orderKey}`,
          );
        } else deliveries += 1;
      }
    }
    const status = cancelled ? OrderStatus.CANCELLED : OrderStatus.PLACED;
    if (order.status !== status) problems.push(`order ${orderId} is ${String(order.status)}, not ${status}`);
    return problems;
  });
  for (const row of index.strayRows) {
    failures.push(
      `${String(row.messageId)} is no subscriber's delivery (subscriber ${String(row.subscriber)})`,
    );
  }
  return verdict(
    'every acknowledged order was written with its messages, a delivery row per subscriber (<messageId>#<subscriber>): seq 1 order.created, seq 2 order.cancelled if cancelled',
    failures,
    `${snapshot.acknowledgedOrders.size} orders (${snapshot.cancelledOrders.size} cancelled), ` +
      `${index.messages.size} messages, ${deliveries} deliveries (one to each of ${SUBSCRIBERS.join(' and ')})`,
  );
}

function noneLost(view: DeliveryView): InvariantResult {
  const { index, stalled } = view;
  const tally = Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => [
      subscriber,
      { confirmed: 0, failed: 0, cancelled: 0, parked: 0, held: 0 },
    ]),
  ) as Record<
    Subscriber,
    { confirmed: number; failed: number; cancelled: number; parked: number; held: number }
  >;
  const failures: string[] = [];
  for (const { subscriber, row, message } of index.deliveries()) {
    const key = String(row.messageId);
    const poisoned = isPoisonedAt(view, message, subscriber);
    const counts = tally[subscriber];
    if (row.status === MessageStatus.CONFIRMED) {
      if (poisoned) failures.push(`poisoned ${key} was confirmed`);
      else counts.confirmed += 1;
      continue;
    }
    if (row.status === MessageStatus.FAILED && poisoned && typeof row.lastError === 'string') {
      counts.failed += 1;
      continue;
    }
    if (row.status === MessageStatus.CANCELLED && isCancelledByOperator(view, message, subscriber)) {
      counts.cancelled += 1;
      continue;
    }
    const stall = stalled.get(key);
    if (stall !== undefined && stall.problem === undefined) {
      if (stall.parked) counts.parked += 1;
      else counts.held += 1;
      continue;
    }
    failures.push(stall?.problem ?? `${key} is ${String(row.status)} (${quoted(row.lastError)})`);
  }
  return verdict(
    'no delivery lost: at each subscriber every delivery is CONFIRMED, FAILED with its reason only if poisoned there, CANCELLED only by the operator, or stalled behind its FAILED seq 1',
    failures,
    SUBSCRIBERS.map((subscriber) => {
      const { confirmed, failed, cancelled, parked, held } = tally[subscriber];
      return (
        `${subscriber}: ${confirmed} CONFIRMED, ${failed} FAILED (poisoned), ${cancelled} CANCELLED (operator), ` +
        `${parked + held} stalled behind a FAILED seq 1 as designed (${parked} parked, ${held} held PENDING)`
      );
    }).join('; '),
  );
}

function derivedStatus({ snapshot, index }: DeliveryView): InvariantResult {
  const failures: string[] = [];
  let confirmed = 0;
  let partly = 0;
  for (const gathered of gatherDeliveries(snapshot.outbox)) {
    const message = index.messages.get(gathered.messageId);
    if (message === undefined) continue;
    const statuses = (gathered.deliveries ?? []).map((delivery) => delivery.status);
    const everyConfirmed =
      statuses.length === SUBSCRIBERS.length &&
      statuses.every((status) => status === MessageStatus.CONFIRMED);
    if ((gathered.status === MessageStatus.CONFIRMED) !== everyConfirmed) {
      failures.push(
        `${gathered.messageId} is ${String(gathered.status)} with deliveries ${statuses.join(', ')}`,
      );
    }
    if (everyConfirmed) confirmed += 1;
    else if (statuses.includes(MessageStatus.CONFIRMED)) partly += 1;
  }
  return verdict(
    "a message's status (gathered from its deliveries) is CONFIRMED only when every subscriber's delivery is",
    failures,
    `${confirmed} messages CONFIRMED at every subscriber, ${partly} at some (the others' deliveries FAILED, CANCELLED or stalled)`,
  );
}

function stallsAlone(view: DeliveryView): InvariantResult {
  const { snapshot, index, stalled } = view;
  const { operator } = snapshot;
  let stalls = 0;
  const failures = [...snapshot.stalledOrders].flatMap((orderId) =>
    SUBSCRIBERS.flatMap((subscriber) => {
      const created = index.message(orderId, ORDER_CREATED);
      // An operator released it there: skipped the create, or replayed it once its cause was fixed.
      if (operator.skipped.has(`${orderId}#${subscriber}`)) return [];
      if (created !== undefined && operator.replayed.has(deliveryKey(created.messageId, subscriber)))
        return [];
      if (!snapshot.cancelledOrders.has(orderId)) return [`stalled order ${orderId} was never cancelled`];
      const cancel = index.delivery(orderId, ORDER_CANCELLED, subscriber);
      if (cancel === undefined) return [`stalled order ${orderId} has no order.cancelled to ${subscriber}`];
      if (!stalled.has(String(cancel.messageId)))
        return [
          `the cancel of stalled order ${orderId} at ${subscriber} is ${String(cancel.status)}, not stalled`,
        ];
      stalls += 1;
      return [];
    }),
  );
  return verdict(
    'a poisoned aggregate stalls alone at each subscriber: the cancel behind a create that alone was poisoned is held or parked, never applied',
    failures,
    `${stalls} cancel(s) stalled (order by subscriber), every other aggregate settled`,
  );
}

function skippedGaps(view: DeliveryView): InvariantResult {
  const { snapshot, index } = view;
  const failures = [...snapshot.operator.skipped].flatMap((skip) => {
    const [orderId = '', name = ''] = skip.split('#');
    const subscriber = SUBSCRIBERS.find((candidate) => candidate === name);
    if (subscriber === undefined) return [`skip ${skip} names no subscriber`];
    const created = index.delivery(orderId, ORDER_CREATED, subscriber);
    const cancel = index.message(orderId, ORDER_CANCELLED);
    const cancelRow = cancel?.deliveries.get(subscriber);
    const expected = SUBSCRIBER_OUTCOMES[subscriber].nothingToCancel;
    const problems: string[] = [];
    if (created?.status !== MessageStatus.CANCELLED || typeof created.skippedAt !== 'string')
      problems.push(
        `order ${orderId} at ${subscriber}: its create is ${String(created?.status)}, not CANCELLED and skipped`,
      );
    const outcome = outcomeAt(view, cancel, subscriber);
    if (cancelRow?.status !== MessageStatus.CONFIRMED || outcome !== expected)
      problems.push(
        `order ${orderId} at ${subscriber}: its cancel is ${String(cancelRow?.status)} (${String(outcome ?? 'no inbox row')}), not applied with ${expected}`,
      );
    return problems;
  });
  return verdict(
    "a skipped gap releases what waited behind it at its subscriber: the FAILED create CANCELLED and skipped, the order's cancel applied with nothing to undo",
    failures,
    `${snapshot.operator.skipped.size} gap(s) skipped (${[...snapshot.operator.skipped].map((skip) => skip.split('#')[1]).join(', ')}), each order's cancel then applied`,
  );
}

function appliedOnce(view: DeliveryView): InvariantResult {
  const { snapshot, inboxes } = view;
  const failures: string[] = [];
  const details: string[] = [];
  for (const subscriber of SUBSCRIBERS) {
    const inbox = inboxes[subscriber];
    const deliveries = new Set<string>();
    let afterCancel = 0;
    for (const row of snapshot.outbox) {
      if (row.subscriber !== subscriber) continue;
      const key = String(row.messageId);
      deliveries.add(key);
      const applied = inbox.get(key);
      if (row.status === MessageStatus.CONFIRMED && applied === undefined)
        failures.push(`${key} confirmed without an inbox row at ${subscriber}`);
      else if (row.status !== MessageStatus.CONFIRMED && applied !== undefined) {
        // A copy handed to SQS before the cancel (a send whose answer was lost, then retried) is still applied:
        // delivery is at least once, and the history records APPLIED_AFTER_CANCEL.
        if (row.status === MessageStatus.CANCELLED && snapshot.operator.cancelled.has(key)) afterCancel += 1;
        else failures.push(`${key} has an inbox row at ${subscriber} but is ${String(row.status)}`);
      }
    }
    for (const key of inbox.keys()) {
      if (messageIdOfDelivery(key, subscriber) === undefined)
        failures.push(`${subscriber}'s inbox row ${key} is not keyed <messageId>#${subscriber}`);
      else if (!deliveries.has(key))
        failures.push(`${subscriber}'s inbox row ${key} belongs to no delivery to it`);
    }
    details.push(
      `${subscriber}: ${inbox.size} inbox rows (${afterCancel} of deliveries cancelled after an earlier copy was sent)`,
    );
  }
  return verdict(
    'each delivery applied once at its subscriber: every CONFIRMED delivery has one inbox row there (<messageId>#<subscriber>), no other has any, and no inbox row belongs to no delivery',
    failures,
    details.join('; '),
  );
}

function appliedInOrder(view: DeliveryView): InvariantResult {
  const { index } = view;
  const failures: string[] = [];
  const tally = Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => [subscriber, { undone: 0, nothing: 0 }]),
  ) as Record<Subscriber, { undone: number; nothing: number }>;
  for (const orderId of index.byOrder.keys()) {
    for (const subscriber of SUBSCRIBERS) {
      const outcomes = SUBSCRIBER_OUTCOMES[subscriber];
      const created = index.message(orderId, ORDER_CREATED);
      const cancel = index.message(orderId, ORDER_CANCELLED);
      const cancelOutcome = outcomeAt(view, cancel, subscriber);
      if (cancelOutcome === undefined) continue;
      const createdOutcome = outcomeAt(view, created, subscriber);
      // A skipped create is never applied: the cancel behind it finds nothing to undo (checked with the skips).
      if (view.snapshot.operator.skipped.has(`${orderId}#${subscriber}`) && createdOutcome === undefined)
        continue;
      const expected =
        createdOutcome === outcomes.created
          ? outcomes.cancelled
          : createdOutcome === outcomes.createRejected
            ? outcomes.nothingToCancel
            : undefined;
      if (expected === undefined || cancelOutcome !== expected) {
        failures.push(
          `order ${orderId} at ${subscriber}: cancel ${String(cancelOutcome)} beside a create ${String(createdOutcome)}`,
        );
        continue;
      }
      const inbox = view.inboxes[subscriber];
      const createdAt = String(created && inbox.get(deliveryKey(created.messageId, subscriber))?.processedAt);
      const cancelledAt = String(cancel && inbox.get(deliveryKey(cancel.messageId, subscriber))?.processedAt);
      if (cancelledAt < createdAt) {
        failures.push(
          `order ${orderId} at ${subscriber}: cancel processed at ${cancelledAt}, before its create at ${createdAt}`,
        );
        continue;
      }
      if (expected === outcomes.cancelled) tally[subscriber].undone += 1;
      else tally[subscriber].nothing += 1;
    }
  }
  return verdict(
    'applied in order at each subscriber: a cancel after its create (inventory RELEASED after APPLIED, NOTHING_TO_RELEASE after out of stock; loyalty REVOKED after AWARDED)',
    failures,
    SUBSCRIBERS.map((subscriber) => {
      const { cancelled, nothingToCancel, created, createRejected } = SUBSCRIBER_OUTCOMES[subscriber];
      return (
        `${subscriber}: ${tally[subscriber].undone} ${cancelled} after ${created}, ` +
        `${tally[subscriber].nothing} ${nothingToCancel} after ${createRejected}`
      );
    }).join('; '),
  );
}

function cursors(view: DeliveryView): InvariantResult {
  const { snapshot, index, inboxes } = view;
  const failures: string[] = [];
  const counts: string[] = [];
  for (const subscriber of SUBSCRIBERS) {
    const cursorRows = snapshot.subscribers[subscriber].cursors;
    const byKey = new Map(cursorRows.map((row) => [String(row.messageId), row]));
    const expectedKeys = new Set<string>();
    for (const [orderId, messages] of index.byOrder) {
      const key = cursorKeyOf(subscriberOrderKey(orderKeyOf(ORDER_SCOPE, orderId), subscriber));
      expectedKeys.add(key);
      // A skip moves the cursor past the skipped seq as if it had been applied.
      const processed =
        messages.filter((message) => inboxes[subscriber].has(deliveryKey(message.messageId, subscriber)))
          .length + (snapshot.operator.skipped.has(`${orderId}#${subscriber}`) ? 1 : 0);
      const lastSeq = byKey.get(key)?.lastSeq ?? 0;
      if (lastSeq !== processed) failures.push(`${key}: lastSeq ${String(lastSeq)}, ${processed} processed`);
    }
    for (const key of byKey.keys()) if (!expectedKeys.has(key)) failures.push(`${key} belongs to no order`);
    counts.push(`${subscriber}: ${cursorRows.length} cursors`);
  }
  return verdict(
    "each subscriber's cursor of each order key (cursor#<orderKey>#<subscriber>) is at its deliveries applied, rejected or skipped there",
    failures,
    counts.join('; '),
  );
}

function parkedRows(view: DeliveryView): InvariantResult {
  const { snapshot, index, stalled, inboxes } = view;
  const failures: string[] = [];
  const counts: string[] = [];
  for (const subscriber of SUBSCRIBERS) {
    const rows = snapshot.subscribers[subscriber].parked;
    let stale = 0;
    for (const row of rows) {
      const key = deliveryKey(String(row.parkedMessageId), subscriber);
      if (stalled.get(key)?.parked === true) continue;
      const delivery = index.byKey.get(key);
      const applied = inboxes[subscriber].get(key);
      // Its delivery was applied by another copy, delivered as a record of its own: the row is stale (it expires
      // with the inbox's retention).
      if (applied !== undefined && delivery?.status === MessageStatus.CONFIRMED) {
        stale += 1;
        continue;
      }
      failures.push(
        `${String(row.messageId)} left parked at ${subscriber} (its delivery ${String(delivery?.status)}, ` +
          `inbox ${String(applied?.outcome ?? 'none')}, resends ${String(delivery?.resends ?? 0)})`,
      );
    }
    counts.push(
      `${subscriber}: ${rows.length} parked row(s), ${rows.length - stale} behind a FAILED seq 1, ${stale} stale (applied through another copy)`,
    );
  }
  return verdict(
    'no parked row left at any subscriber for a settled aggregate (only a delivery stalled behind a FAILED seq 1 stays parked)',
    failures,
    counts.join('; '),
  );
}
