import { reservationKeyOf } from '../../../functions/inventory/reservation.ts';
import { POINTS_PER_UNIT } from '../../../functions/loyalty/apply-order/order-points.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { type DeliveryView, outcomeAt } from './delivery-invariants.ts';
import { SUBSCRIBER_OUTCOMES } from './inbox-outcomes.ts';
import { type InvariantResult, verdict } from './invariant-result.ts';

interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
}

/**
 * Checks each subscriber's business table against what its inbox says it applied: the inventory's stock and
 * reservations, the loyalty service's awards and balances — each effect once per delivery applied, never twice,
 * never for a delivery not applied.
 */
export function checkEffects(view: DeliveryView): InvariantResult[] {
  return [...stockAndReservations(view), points(view)];
}

function stockAndReservations(view: DeliveryView): InvariantResult[] {
  const { snapshot, index } = view;
  const { created, cancelled } = SUBSCRIBER_OUTCOMES.inventory;
  const ordersById = new Map(snapshot.orders.map((order) => [String(order.orderId), order]));
  const moved = new Map<string, number>();
  const move = (orderId: string, sign: number) => {
    for (const line of (ordersById.get(orderId)?.items ?? []) as OrderLine[]) {
      moved.set(line.sku, (moved.get(line.sku) ?? 0) + sign * line.quantity);
    }
  };
  const holding = new Set<string>();
  for (const orderId of index.byOrder.keys()) {
    const applied = outcomeAt(view, index.message(orderId, ORDER_CREATED), 'inventory') === created;
    const released = outcomeAt(view, index.message(orderId, ORDER_CANCELLED), 'inventory') === cancelled;
    if (applied) move(orderId, -1);
    if (released) move(orderId, 1);
    if (applied && !released) holding.add(reservationKeyOf(orderId));
  }
  const stock = new Map(snapshot.inventory.map((row) => [String(row.sku), Number(row.available)]));
  const reserved = new Set(snapshot.reservations.map((row) => String(row.sku)));
  return [
    verdict(
      'stock moved exactly once per order inventory applied and cancel it released (initial − Σ applied + Σ released = final)',
      [...snapshot.initialStock].flatMap(([sku, initial]) => {
        const expected = initial + (moved.get(sku) ?? 0);
        const actual = stock.get(sku);
        return actual === expected && expected >= 0 ? [] : [`${sku}: expected ${expected}, found ${actual}`];
      }),
      `${snapshot.initialStock.size} SKUs reconcile`,
    ),
    verdict(
      'reservation rows exactly for the creates inventory APPLIED and did not RELEASE',
      [
        ...[...holding].filter((key) => !reserved.has(key)).map((key) => `${key} missing`),
        ...[...reserved].filter((key) => !holding.has(key)).map((key) => `${key} left over`),
      ],
      `${reserved.size} reservation rows`,
    ),
  ];
}

function points(view: DeliveryView): InvariantResult {
  const { snapshot, index } = view;
  const { created, createRejected, cancelled } = SUBSCRIBER_OUTCOMES.loyalty;
  const ordersById = new Map(snapshot.orders.map((order) => [String(order.orderId), order]));
  const awards = new Map(snapshot.awards.map((row) => [String(row.orderId), row]));
  const failures: string[] = [];
  const balances = new Map<string, number>();
  let awarded = 0;
  let revoked = 0;
  for (const orderId of index.byOrder.keys()) {
    const createOutcome = outcomeAt(view, index.message(orderId, ORDER_CREATED), 'loyalty');
    const cancelOutcome = outcomeAt(view, index.message(orderId, ORDER_CANCELLED), 'loyalty');
    const award = awards.get(orderId);
    awards.delete(orderId);
    if (createOutcome === createRejected)
      failures.push(`order ${orderId} was awarded twice (${createRejected})`);
    if ((createOutcome === created) !== (award !== undefined)) {
      failures.push(
        `order ${orderId}: its create is ${String(createOutcome ?? 'not applied')} at loyalty, ` +
          `${award === undefined ? 'no award row' : 'yet it has an award row'}`,
      );
      continue;
    }
    if (award === undefined) continue;
    awarded += 1;
    const order = ordersById.get(orderId);
    const units = ((order?.items ?? []) as OrderLine[]).reduce((sum, line) => sum + line.quantity, 0);
    if (award.points !== units * POINTS_PER_UNIT || award.customerId !== order?.customerId) {
      failures.push(
        `order ${orderId} awarded ${String(award.points)} points to ${String(award.customerId)}, ` +
          `not ${units * POINTS_PER_UNIT} to ${String(order?.customerId)}`,
      );
    }
    const isRevoked = cancelOutcome === cancelled;
    if (isRevoked !== (typeof award.revokedAt === 'string')) {
      failures.push(
        `order ${orderId}: its cancel is ${String(cancelOutcome ?? 'not applied')} at loyalty, its award ` +
          `${typeof award.revokedAt === 'string' ? 'revoked' : 'not revoked'}`,
      );
    }
    if (isRevoked) revoked += 1;
    else {
      const customerId = String(award.customerId);
      balances.set(customerId, (balances.get(customerId) ?? 0) + Number(award.points));
    }
  }
  for (const orderId of awards.keys())
    failures.push(`award row of ${orderId}, an order the outbox never had`);
  const customers = new Map(snapshot.points.map((row) => [String(row.customerId), Number(row.points)]));
  for (const [customerId, balance] of customers) {
    const expected = balances.get(customerId) ?? 0;
    if (balance !== expected || balance < 0)
      failures.push(`customer ${customerId} has ${balance} points, their unrevoked awards ${expected}`);
  }
  for (const customerId of balances.keys()) {
    if (!customers.has(customerId))
      failures.push(`customer ${customerId} was awarded points but has no balance`);
  }
  return verdict(
    "points awarded once per order loyalty applied (10 per unit, to its customer) and revoked once per cancel that followed an award: each customer's balance is their unrevoked awards, never negative",
    failures,
    `${awarded} orders awarded (${revoked} revoked), ${customers.size} customers' balances reconcile, none negative`,
  );
}
