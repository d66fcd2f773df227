import { MessageStatus } from 'serverless-outbox';
import type { DrillResult } from './drill-config.ts';

/** The tables' contents at the end of a drill, plus what the drill did on purpose. */
export interface DrillSnapshot {
  readonly orders: readonly Record<string, unknown>[];
  readonly outbox: readonly Record<string, unknown>[];
  readonly inbox: readonly Record<string, unknown>[];
  readonly inventory: readonly Record<string, unknown>[];
  /** Stock per SKU before the first order. */
  readonly initialStock: ReadonlyMap<string, number>;
  /** Orders whose message SQS rejects forever (they must end FAILED, with a reason). */
  readonly poisonedOrders: ReadonlySet<string>;
  /** Orders the API acknowledged with 201 (or 409 on a retry of an acknowledged write). */
  readonly acknowledgedOrders: ReadonlySet<string>;
}

/** One checked invariant. */
export interface InvariantResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
}

/**
 * Checks, from the tables alone, what the product promises: no message lost, every effect applied exactly
 * once (stock reconciles to the order ledger), and FAILED only for messages that were poisoned on purpose.
 */
export function checkInvariants(snapshot: DrillSnapshot): InvariantResult[] {
  const results: InvariantResult[] = [];
  const check = (name: string, failures: readonly string[], okDetail: string) =>
    results.push({
      name,
      ok: failures.length === 0,
      detail:
        failures.length === 0
          ? okDetail
          : `${failures.length} violation(s), e.g. ${failures.slice(0, 3).join('; ')}`,
    });

  const ordersById = new Map(snapshot.orders.map((order) => [String(order.orderId), order]));
  const messagesByOrder = new Map<string, Record<string, unknown>[]>();
  for (const message of snapshot.outbox) {
    const list = messagesByOrder.get(String(message.aggregateId)) ?? [];
    list.push(message);
    messagesByOrder.set(String(message.aggregateId), list);
  }
  const inboxById = new Map(snapshot.inbox.map((row) => [String(row.messageId), row]));

  check(
    'every acknowledged order was written with exactly one message',
    [...snapshot.acknowledgedOrders].flatMap((orderId) => {
      if (!ordersById.has(orderId)) return [`order ${orderId} acknowledged but missing`];
      const count = messagesByOrder.get(orderId)?.length ?? 0;
      return count === 1 ? [] : [`order ${orderId} has ${count} messages`];
    }),
    `${snapshot.acknowledgedOrders.size} orders, ${snapshot.outbox.length} messages`,
  );

  check(
    'no message lost: each is CONFIRMED, or FAILED with its reason only if poisoned',
    snapshot.outbox.flatMap((message) => {
      const orderId = String(message.aggregateId);
      const poisoned = snapshot.poisonedOrders.has(orderId);
      if (message.status === MessageStatus.CONFIRMED) {
        return poisoned ? [`poisoned order ${orderId} was confirmed`] : [];
      }
      if (message.status === MessageStatus.FAILED && poisoned && typeof message.lastError === 'string')
        return [];
      return [
        `${String(message.messageId)} is ${String(message.status)} (${String(message.lastError ?? 'no error')})`,
      ];
    }),
    'all settled',
  );

  check(
    'every CONFIRMED message has exactly one inbox row; no poisoned one has any',
    snapshot.outbox.flatMap((message) => {
      const row = inboxById.get(String(message.messageId));
      if (message.status === MessageStatus.CONFIRMED && !row)
        return [`${String(message.messageId)} confirmed without inbox row`];
      if (message.status !== MessageStatus.CONFIRMED && row)
        return [`${String(message.messageId)} has inbox row but is ${String(message.status)}`];
      return [];
    }),
    `${snapshot.inbox.length} inbox rows`,
  );

  const applied = new Map<string, number>();
  for (const message of snapshot.outbox) {
    if (inboxById.get(String(message.messageId))?.outcome !== 'APPLIED') continue;
    const order = ordersById.get(String(message.aggregateId));
    for (const line of (order?.items ?? []) as OrderLine[]) {
      applied.set(line.sku, (applied.get(line.sku) ?? 0) + line.quantity);
    }
  }
  const stock = new Map(snapshot.inventory.map((row) => [String(row.sku), Number(row.available)]));
  check(
    'stock moved exactly once per applied order (initial − final = Σ applied quantities)',
    [...snapshot.initialStock].flatMap(([sku, initial]) => {
      const expected = initial - (applied.get(sku) ?? 0);
      const actual = stock.get(sku);
      return actual === expected && expected >= 0 ? [] : [`${sku}: expected ${expected}, found ${actual}`];
    }),
    `${snapshot.initialStock.size} SKUs reconcile`,
  );
  return results;
}

/** Counts of how the messages ended. */
export function outcomeCounts(snapshot: DrillSnapshot): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const message of snapshot.outbox)
    counts[String(message.status)] = (counts[String(message.status)] ?? 0) + 1;
  for (const row of snapshot.inbox)
    counts[`inbox ${String(row.outcome)}`] = (counts[`inbox ${String(row.outcome)}`] ?? 0) + 1;
  return counts;
}

/** The drill's result from the final tables and what the run counted along the way. */
export function drillResult(
  run: Pick<
    DrillResult,
    'mode' | 'config' | 'injected' | 'duplicatesSuppressed' | 'deliveries' | 'writeMs' | 'settleMs'
  > & {
    readonly simulatedMs?: number;
  },
  snapshot: DrillSnapshot,
  counts: Readonly<Record<string, number>>,
): DrillResult {
  return { ...run, counts: { ...outcomeCounts(snapshot), ...counts }, invariants: checkInvariants(snapshot) };
}

/** The four tables the invariants read. */
export type DrillTable = 'orders' | 'outbox' | 'inbox' | 'inventory';

/** Reads every table the invariants need and adds what the drill did on purpose. */
export async function takeSnapshot(
  read: (table: DrillTable) => Promise<Record<string, unknown>[]> | Record<string, unknown>[],
  facts: Pick<DrillSnapshot, 'initialStock' | 'poisonedOrders' | 'acknowledgedOrders'>,
): Promise<DrillSnapshot> {
  return {
    orders: await read('orders'),
    outbox: await read('outbox'),
    inbox: await read('inbox'),
    inventory: await read('inventory'),
    ...facts,
  };
}
