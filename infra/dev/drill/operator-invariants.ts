import { MessageStatus } from '../../../shared/index.ts';
import { DeadLetterCause, readDeadLetter } from '../../../shared/memory/index.ts';
import type { DeliveryView } from './delivery-invariants.ts';
import type { DeadLetterCopy } from './drill-snapshot.ts';
import { deliveryKey, SUBSCRIBERS } from './drill-subscribers.ts';
import { type InvariantResult, quoted, verdict } from './invariant-result.ts';

/** What a consumer's own dead letter says when every receive failed with a fault the drill injected. */
const INJECTED_FAULT = /\binjected \w+: /;

/**
 * Checks what the drill did on purpose beside the orders: the rogue messages written behind the writer's back each
 * FAILED with its reason at every subscriber, nothing dead-lettered for contention at any subscriber, and the
 * operator's actions answered as documented, per subscriber.
 */
export function checkDeliberateFaults(view: DeliveryView): InvariantResult[] {
  return [rogueMessages(view), contention(view), operatorActions(view)];
}

function rogueMessages({ snapshot, index }: DeliveryView): InvariantResult {
  const failures = [...snapshot.rogueMessages].flatMap(([messageId, expected]) =>
    SUBSCRIBERS.flatMap((subscriber) => {
      const row = index.byKey.get(deliveryKey(messageId, subscriber));
      if (row === undefined)
        return [`rogue ${expected.kind} message ${messageId} has no delivery to ${subscriber}`];
      const lastError = row.lastError;
      if (
        row.status === MessageStatus.FAILED &&
        typeof lastError === 'string' &&
        expected.reason.test(lastError)
      )
        return [];
      return [
        `rogue ${expected.kind} delivery ${String(row.messageId)} is ${String(row.status)} (${quoted(lastError)})`,
      ];
    }),
  );
  return verdict(
    "every rogue message (written behind the writer's back, a delivery per subscriber) ended FAILED with its reason",
    failures,
    `${snapshot.rogueMessages.size} messages, ${snapshot.rogueMessages.size * SUBSCRIBERS.length} deliveries FAILED ` +
      `(${[...snapshot.rogueMessages.values()].map(({ kind }) => kind).join(', ')})`,
  );
}

function contention({ snapshot }: DeliveryView): InvariantResult {
  const failures: string[] = [];
  const details: string[] = [];
  for (const subscriber of SUBSCRIBERS) {
    const letters = snapshot.subscribers[subscriber].deadLetters;
    let afterFaults = 0;
    let hotAfterFaults = 0;
    for (const letter of letters) {
      const orderId = aggregateIdOf(letter.body);
      if (orderId !== undefined && snapshot.poisonedOrders.has(orderId)) continue;
      const hot = orderId !== undefined && snapshot.hotOrders.has(orderId);
      const order = `${hot ? 'hot ' : ''}order ${String(orderId)}`;
      const read = readDeadLetter(letter);
      // No reason of the consumer's: SQS's redrive policy moved it after maxReceiveCount receives that the consumer
      // never finished (each invocation stopped, or its record neither acknowledged nor given a verdict).
      if (read.cause === DeadLetterCause.REDRIVE_POLICY) {
        failures.push(
          `${subscriber}: ${order} moved to the DLQ by the queue's redrive policy after ${read.receives ?? 'an unknown number of'} ` +
            `receives (maxReceiveCount ${snapshot.maxReceiveCount}), with no reason: receives the consumer never finished`,
        );
        continue;
      }
      // On its last receive the consumer dead-letters with the last error; a conflict is requeued instead, its
      // receive count starting again, so a message dead-lettered this way failed for a fault on every receive.
      if (read.cause === DeadLetterCause.MAX_RECEIVES && INJECTED_FAULT.test(read.lastError ?? '')) {
        afterFaults += 1;
        if (hot) hotAfterFaults += 1;
        continue;
      }
      failures.push(`${subscriber}: ${order} dead-lettered (${read.cause}: ${quoted(read.lastError)})`);
    }
    details.push(
      `${subscriber}: ${letters.length} dead letters, ${afterFaults} after injected faults on every receive ` +
        `(${hotAfterFaults} of hot-SKU orders)`,
    );
  }
  return verdict(
    'contention dead-letters nothing at any subscriber: each dead letter is a poisoned order or followed injected faults',
    failures,
    `${details.join('; ')}; none moved by a redrive policy, none for contention`,
  );
}

function operatorActions({ snapshot, index, inboxes }: DeliveryView): InvariantResult {
  const { operator } = snapshot;
  const failures: string[] = [...operator.problems];
  for (const key of snapshot.erasedLeft) failures.push(`erased ${key} is still in the outbox`);
  for (const row of operator.erased) {
    const subscriber = SUBSCRIBERS.find((name) => name === row.subscriber);
    if (subscriber !== undefined && !inboxes[subscriber].has(String(row.messageId)))
      failures.push(`erased ${String(row.messageId)} lost its inbox row at ${subscriber}`);
  }
  for (const key of operator.replayed) {
    const row = index.byKey.get(key);
    const subscriber = SUBSCRIBERS.find((name) => name === row?.subscriber);
    if (row?.status !== MessageStatus.CONFIRMED || subscriber === undefined || !inboxes[subscriber].has(key))
      failures.push(`replayed ${key} is ${String(row?.status)}, not CONFIRMED and applied`);
  }
  for (const control of operator.controls) {
    const key = deliveryKey(control.messageId, control.subscriber);
    const row = index.byKey.get(key);
    const subscriber = SUBSCRIBERS.find((name) => name === control.subscriber);
    const applied = subscriber === undefined ? undefined : inboxes[subscriber].get(key);
    if (
      row?.status !== MessageStatus.CONFIRMED ||
      row.outcome !== control.outcome ||
      applied?.outcome !== control.outcome
    )
      failures.push(
        `the operator's ${control.outcome} message ${key} is ${String(row?.status)} (${String(row?.outcome)}, ` +
          `inbox ${String(applied?.outcome ?? 'none')}), not confirmed ${control.outcome}`,
      );
  }
  const erasedOrders = new Set(operator.erased.map((row) => String(row.aggregateId))).size;
  return verdict(
    'operator actions mid-run, per subscriber, each answered as documented: a replayed delivery applied, a skip and an erase each confirmed by every subscriber sent one, an erased order gone from the outbox with its inbox rows kept',
    failures,
    `${operator.cancelled.size} deliveries cancelled right after their message's write (whole messages and single ` +
      `subscribers), ${operator.cancelsRefused} refused as already SENT, ${operator.replayed.size} FAILED ` +
      `deliveries replayed after the fix and applied, ${operator.skipped.size} gap(s) skipped, ${erasedOrders} ` +
      `order(s) erased; ${operator.controls.length} outbox.skip/outbox.erase messages confirmed SKIPPED/ERASED`,
  );
}

/** The order a dead letter's envelope belongs to, when its body is one. */
function aggregateIdOf(body: string): string | undefined {
  try {
    const envelope: unknown = JSON.parse(body);
    const aggregateId = (envelope as { aggregateId?: unknown } | null)?.aggregateId;
    return typeof aggregateId === 'string' ? aggregateId : undefined;
  } catch {
    return undefined;
  }
}

/** How many dead letters the consumer sent with its reason, and how many SQS's redrive policy moved without one. */
export function deadLetterCounts(deadLetters: readonly DeadLetterCopy[]): {
  readonly byConsumer: number;
  readonly byRedrivePolicy: number;
} {
  const byRedrivePolicy = deadLetters.filter(
    (letter) => readDeadLetter(letter).cause === DeadLetterCause.REDRIVE_POLICY,
  ).length;
  return { byConsumer: deadLetters.length - byRedrivePolicy, byRedrivePolicy };
}
