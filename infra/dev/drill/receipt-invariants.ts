import { HistoryEvent, MessageStatus } from '../../../shared/index.ts';
import { historyOf } from '../../../shared/memory/index.ts';
import type { DeliveryView } from './delivery-invariants.ts';
import { SUBSCRIBERS } from './drill-subscribers.ts';
import { type InvariantResult, verdict } from './invariant-result.ts';
import { SETTLED_STATUSES } from './stalled-deliveries.ts';

/** Who the history names for a confirmation by `subscriber`'s receipt. */
export function receiptActor(subscriber: string): string {
  return `receipt:${subscriber}`;
}

/**
 * Checks what the receipts did, duplicated, lost and delayed as they were: each delivery confirmed once, by its own
 * subscriber's receipt, with the outcome its inbox recorded and no earlier than it was applied; each delivery whose
 * receipt was lost confirmed all the same, by the receipt of a later copy. And what the stop did: the stopped
 * subscriber applied nothing while stopped and caught up after, and held none of the running one's deliveries.
 */
export function checkReceiptsAndStop(view: DeliveryView): InvariantResult[] {
  return [receipts(view), ...stop(view)];
}

function receipts(view: DeliveryView): InvariantResult {
  const { snapshot, inboxes, index } = view;
  const failures: string[] = [];
  let confirmed = 0;
  for (const row of snapshot.outbox) {
    const subscriber = SUBSCRIBERS.find((name) => name === row.subscriber);
    if (subscriber === undefined) continue;
    const key = String(row.messageId);
    const history = historyOf(row);
    const confirmations = history.filter((entry) => entry.event === HistoryEvent.CONFIRMED);
    if (confirmations.length > 1) failures.push(`${key} was confirmed ${confirmations.length} times`);
    if (row.status !== MessageStatus.CONFIRMED) continue;
    confirmed += 1;
    const [confirmation] = confirmations;
    if (confirmation?.by !== receiptActor(subscriber))
      failures.push(`${key} was confirmed by ${String(confirmation?.by)}, not by ${subscriber}'s receipt`);
    const applied = inboxes[subscriber].get(key);
    // No inbox row: the delivery invariants name it.
    if (applied === undefined) continue;
    if (row.outcome !== applied.outcome)
      failures.push(`${key} confirmed with ${String(row.outcome)}, applied with ${String(applied.outcome)}`);
    if (String(row.confirmedAt) < String(applied.processedAt))
      failures.push(
        `${key} confirmed at ${String(row.confirmedAt)}, before it was applied at ${String(applied.processedAt)}`,
      );
  }
  const { lost, duplicated, delayed } = snapshot.receipts;
  let resends = 0;
  for (const key of lost.keys()) {
    const row = index.byKey.get(key);
    // A delivery erased since is in the snapshot as it was; one the operator cancelled may have been applied after.
    if (row === undefined) continue;
    resends += Number(row.resends ?? 0);
    const appliedAfterCancel = historyOf(row).some(
      (entry) => entry.event === HistoryEvent.APPLIED_AFTER_CANCEL,
    );
    if (row.status !== MessageStatus.CONFIRMED && !appliedAfterCancel)
      failures.push(`${key} lost its receipt and is ${String(row.status)}, not confirmed by a later one`);
  }
  const total = (counts: ReadonlyMap<string, number>) => [...counts.values()].reduce((sum, n) => sum + n, 0);
  return verdict(
    "receipts confirm each delivery once, by its own subscriber's receipt, with its inbox outcome and not before it was applied; a lost receipt costs a redelivery, never the delivery",
    failures,
    `${confirmed} deliveries confirmed, each once; of ${snapshot.receipts.sent} receipts sent, ${total(lost)} lost ` +
      `(their ${lost.size} deliveries confirmed by a later receipt, after ${resends} resends in all: ` +
      `${lost.size === 0 ? 0 : (resends / lost.size).toFixed(2)} per delivery), ${total(duplicated)} duplicated, ` +
      `${total(delayed)} delayed`,
  );
}

function stop(view: DeliveryView): InvariantResult[] {
  const { snapshot, index, inboxes, stalled } = view;
  const facts = snapshot.stop;
  const { subscriber, running, stoppedAt, restartedAt, plannedRestartAt } = facts;
  const during = (at: unknown) => {
    const ms = typeof at === 'string' ? Date.parse(at) : Number.NaN;
    return ms >= stoppedAt && ms < restartedAt;
  };
  const appliedWhileStopped = [...inboxes[subscriber].values()].filter((row) => during(row.processedAt));
  const waited: Record<string, unknown>[] = [];
  const unsettled: string[] = [];
  for (const { subscriber: name, row } of index.deliveries()) {
    if (name !== subscriber || !during(row.createdAt)) continue;
    waited.push(row);
    const stall = stalled.get(String(row.messageId));
    const settled = SETTLED_STATUSES.has(row.status) || (stall !== undefined && stall.problem === undefined);
    if (!settled) unsettled.push(`${String(row.messageId)} is ${String(row.status)}`);
  }
  const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
  const open = facts.openAtRestart;
  const waitedOn = open.filter((delivery) => delivery.ownDelay === undefined);
  const reasons = new Map<string, number>();
  for (const { ownDelay } of open) {
    const reason = (ownDelay ?? '').replace(/\(.*\)|\d+/g, '').trim();
    if (reason !== '') reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  return [
    verdict(
      `the stopped subscriber (${subscriber}) applied nothing while stopped, and caught up after: its deliveries written meanwhile all settled`,
      [
        ...appliedWhileStopped.map(
          (row) =>
            `${String(row.messageId)} applied at ${String(row.processedAt)}, while ${subscriber} was stopped`,
        ),
        ...unsettled,
      ],
      `${subscriber} stopped ${seconds(restartedAt - stoppedAt)} (planned ${seconds(plannedRestartAt - stoppedAt)}): ` +
        `${waited.length} of its deliveries written meanwhile, none applied before its return, every one settled after`,
    ),
    verdict(
      `the stop held none of the running subscriber's (${running}) deliveries: those of regular orders (the hot SKU's burst apart) written during the planned stop settled before ${subscriber}'s return, or were open then for a delay of their own`,
      waitedOn.map(
        (delivery) =>
          `${delivery.key} was ${delivery.status}, sent once and not retried, when ${subscriber} started again`,
      ),
      `${facts.awaited} ${running} deliveries written during the planned stop: ${facts.awaited - open.length} settled ` +
        `while ${subscriber} was stopped, ${open.length} open at its return, each for a delay of its own` +
        (reasons.size === 0
          ? ''
          : ` (${[...reasons].map(([reason, count]) => `${count} ${reason}`).join('; ')})`),
    ),
  ];
}
