import { ORDER_CREATED } from '../../../functions/orders/order.ts';
import { confirmLatency } from './confirm-latency.ts';
import { checkDeliveries, type DeliveryView } from './delivery-invariants.ts';
import type { DrillResult } from './drill-config.ts';
import { type DrillSnapshot, OutboxIndex } from './drill-snapshot.ts';
import { deliveryKey, SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';
import { checkEffects } from './effect-invariants.ts';
import { SUBSCRIBER_OUTCOMES } from './inbox-outcomes.ts';
import type { InvariantResult } from './invariant-result.ts';
import { checkMetrics, type MetricObservations } from './metric-invariants.ts';
import { checkDeliberateFaults } from './operator-invariants.ts';
import { checkReceiptsAndStop } from './receipt-invariants.ts';
import { stalledDeliveries } from './stalled-deliveries.ts';

/** The views of a snapshot every check shares. */
export function deliveryView(snapshot: DrillSnapshot): DeliveryView {
  return {
    snapshot,
    index: new OutboxIndex(snapshot.outbox, snapshot.rogueMessages),
    stalled: stalledDeliveries(snapshot.outbox, snapshot.subscribers),
    inboxes: Object.fromEntries(
      SUBSCRIBERS.map((subscriber) => [
        subscriber,
        new Map(snapshot.subscribers[subscriber].inbox.map((row) => [String(row.messageId), row])),
      ]),
    ) as Record<Subscriber, Map<string, Record<string, unknown>>>,
  };
}

/**
 * Checks, from the tables and the dead-letter queues alone, what the product promises each subscriber: no delivery
 * lost, every effect applied exactly once per subscriber (stock and points reconcile to the order ledger), in each
 * order's sequence there, each delivery confirmed once by its own receipt whatever became of the receipts, FAILED
 * only for deliveries poisoned on purpose or that can never be delivered as stored (each with its reason), nothing
 * dead-lettered for contention, and a stopped subscriber that catches up without holding the other back.
 */
export function checkInvariants(snapshot: DrillSnapshot): InvariantResult[] {
  const view = deliveryView(snapshot);
  return [
    ...checkDeliveries(view),
    ...checkEffects(view),
    ...checkReceiptsAndStop(view),
    ...checkDeliberateFaults(view),
  ];
}

/**
 * Counts of how the deliveries ended at each subscriber (the rogue ones on their own), of the inbox outcomes, of the
 * hot SKU's orders applied (their creates, at inventory), and of the ordered rows and effects: orders cancelled,
 * cursors, parked rows left, reservations, awards; and what the operator did.
 */
export function outcomeCounts(snapshot: DrillSnapshot): Record<string, number> {
  const view = deliveryView(snapshot);
  const counts: Record<string, number> = {};
  const add = (name: string, by = 1) => {
    counts[name] = (counts[name] ?? 0) + by;
  };
  const byStatus = (rows: Iterable<Record<string, unknown>>, what: string) => {
    const statuses = [...rows].map((row) => String(row.status));
    for (const status of [...new Set(statuses)].sort(byStatusOrder))
      add(`${what} ${status}`, statuses.filter((one) => one === status).length);
  };
  for (const subscriber of SUBSCRIBERS) {
    byStatus(
      [...view.index.deliveries()]
        .filter((delivery) => delivery.subscriber === subscriber)
        .map(({ row }) => row),
      `${subscriber} deliveries`,
    );
  }
  byStatus(view.index.rogueRows, 'rogue deliveries');
  byStatus(view.index.controlRows, "operator's control deliveries");
  for (const subscriber of SUBSCRIBERS) {
    const outcomes = snapshot.subscribers[subscriber].inbox.map((row) => String(row.outcome));
    for (const outcome of [...new Set(outcomes)].sort())
      add(`${subscriber} inbox ${outcome}`, outcomes.filter((one) => one === outcome).length);
  }
  let hotApplied = 0;
  for (const orderId of snapshot.hotOrders) {
    const created = view.index.message(orderId, ORDER_CREATED);
    const applied = created && view.inboxes.inventory.get(deliveryKey(created.messageId, 'inventory'));
    if (applied?.outcome === SUBSCRIBER_OUTCOMES.inventory.created) hotApplied += 1;
  }
  counts['hot SKU orders APPLIED at inventory'] = hotApplied;
  counts['orders cancelled'] = snapshot.cancelledOrders.size;
  for (const subscriber of SUBSCRIBERS) {
    counts[`${subscriber} cursor rows`] = snapshot.subscribers[subscriber].cursors.length;
    counts[`${subscriber} parked rows left`] = snapshot.subscribers[subscriber].parked.length;
  }
  counts['reservation rows'] = snapshot.reservations.length;
  counts['award rows'] = snapshot.awards.length;
  const { operator } = snapshot;
  counts['operator: deliveries cancelled right after their write'] = operator.cancelled.size;
  counts['operator: cancels refused (already marked SENT)'] = operator.cancelsRefused;
  counts['operator: FAILED deliveries replayed'] = operator.replayed.size;
  counts['operator: FAILED seq 1 skipped'] = operator.skipped.size;
  counts['operator: settled orders erased'] = new Set(
    operator.erased.map((row) => String(row.aggregateId)),
  ).size;
  return counts;
}

/** The order the report lists statuses in: settled ones first, then the open ones. */
const STATUS_ORDER = ['CONFIRMED', 'FAILED', 'CANCELLED', 'SENT', 'PENDING'];

function byStatusOrder(a: string, b: string): number {
  const rank = (status: string) =>
    STATUS_ORDER.includes(status) ? STATUS_ORDER.indexOf(status) : STATUS_ORDER.length;
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** What a drill run counted along the way, besides the tables. */
export type DrillRunFigures = Pick<
  DrillResult,
  'mode' | 'config' | 'injected' | 'deliveries' | 'writeMs' | 'settleMs' | 'simulatedMs' | 'metrics'
> &
  Pick<MetricObservations, 'unreportedCommits' | 'receiptsApplied'>;

/**
 * The drill's result from the final tables and what the run counted along the way: the invariants of the tables,
 * then those that hold the metrics to the tables, each subscriber's confirm latency, and the counts.
 */
export function drillResult(
  run: DrillRunFigures,
  snapshot: DrillSnapshot,
  counts: Readonly<Record<string, number>>,
): DrillResult {
  const { unreportedCommits, receiptsApplied, ...result } = run;
  const unreported = Object.fromEntries(
    SUBSCRIBERS.map((subscriber) => [
      `${subscriber} inbox rows whose delivery failed after its commit (in no metric)`,
      Object.values(unreportedCommits[subscriber] ?? {}).reduce(
        (sum, { applied, rejected }) => sum + applied + rejected,
        0,
      ),
    ]),
  );
  const view = deliveryView(snapshot);
  const total = (counts: ReadonlyMap<string, number>) => [...counts.values()].reduce((sum, n) => sum + n, 0);
  const { lost } = snapshot.receipts;
  return {
    ...result,
    receipts: {
      sent: snapshot.receipts.sent,
      bodies: snapshot.receipts.bodies,
      lost: total(lost),
      duplicated: total(snapshot.receipts.duplicated),
      delayed: total(snapshot.receipts.delayed),
      resendsAfterLoss: [...lost.keys()].reduce(
        (sum, key) => sum + Number(view.index.byKey.get(key)?.resends ?? 0),
        0,
      ),
      applied: receiptsApplied,
    },
    stop: snapshot.stop,
    latency: confirmLatency(view.index, snapshot.stop, snapshot.hotOrders),
    counts: { ...outcomeCounts(snapshot), ...counts, ...unreported },
    invariants: [
      ...checkInvariants(snapshot),
      ...checkMetrics(snapshot, { metrics: run.metrics, unreportedCommits, receiptsApplied }),
    ],
  };
}
