import { DEAD_LETTER_ATTRIBUTES, MessageStatus } from 'serverless-outbox';
import type { DrillResult } from './drill-config.ts';
import { checkMetrics, type MetricObservations } from './metric-invariants.ts';
import type { RogueMessage } from './rogue-messages.ts';

/** A message in the consumer's dead-letter queue: its body and its string attributes (the reason it is there). */
export interface DeadLetterCopy {
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

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
  /** The orders of the burst on the hot SKU. */
  readonly hotOrders: ReadonlySet<string>;
  /**
   * Messages written straight into the outbox behind the writer's back, by id, with what each must fail with.
   * They belong to no order.
   */
  readonly rogueMessages: ReadonlyMap<string, RogueMessage>;
  /** What the consumer's dead-letter queue holds at the end. */
  readonly deadLetters: readonly DeadLetterCopy[];
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

/** What a consumer's own dead letter says when every receive failed with a fault the drill injected. */
const INJECTED_FAULT = /\binjected \w+: /;

/** The longest lastError quoted in a violation. */
const QUOTED_ERROR_CHARS = 160;

/**
 * Checks, from the tables and the dead-letter queue alone, what the product promises: no message lost, every
 * effect applied exactly once (stock reconciles to the order ledger), FAILED only for messages that were
 * poisoned on purpose or can never be delivered as stored (each with its reason), and nothing dead-lettered
 * for contention.
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
  const rogue = snapshot.outbox.filter((message) => snapshot.rogueMessages.has(String(message.messageId)));
  const orderMessages = snapshot.outbox.filter(
    (message) => !snapshot.rogueMessages.has(String(message.messageId)),
  );
  const messagesByOrder = new Map<string, Record<string, unknown>[]>();
  for (const message of orderMessages) {
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
    `${snapshot.acknowledgedOrders.size} orders, ${orderMessages.length} messages`,
  );

  check(
    'no message lost: each is CONFIRMED, or FAILED with its reason only if poisoned',
    orderMessages.flatMap((message) => {
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

  const rogueById = new Map(rogue.map((message) => [String(message.messageId), message]));
  check(
    "every rogue message (written behind the writer's back) ended FAILED with its reason",
    [...snapshot.rogueMessages].flatMap(([messageId, expected]) => {
      const message = rogueById.get(messageId);
      if (message === undefined) return [`rogue ${expected.kind} message ${messageId} is missing`];
      const lastError = message.lastError;
      if (
        message.status === MessageStatus.FAILED &&
        typeof lastError === 'string' &&
        expected.reason.test(lastError)
      )
        return [];
      return [
        `rogue ${expected.kind} message ${messageId} is ${String(message.status)} (${quoted(lastError)})`,
      ];
    }),
    `${snapshot.rogueMessages.size} FAILED (${[...snapshot.rogueMessages.values()].map(({ kind }) => kind).join(', ')})`,
  );

  let afterInjectedFaults = 0;
  let hotAfterInjectedFaults = 0;
  check(
    'contention dead-letters nothing: each dead letter is a poisoned order or followed injected faults',
    snapshot.deadLetters.flatMap((letter) => {
      const orderId = aggregateIdOf(letter.body);
      if (orderId !== undefined && snapshot.poisonedOrders.has(orderId)) return [];
      const hot = orderId !== undefined && snapshot.hotOrders.has(orderId);
      const reason = letter.attributes[DEAD_LETTER_ATTRIBUTES.reason];
      const lastError = letter.attributes[DEAD_LETTER_ATTRIBUTES.lastError];
      // On its last receive the consumer dead-letters with the last error; a conflict is requeued instead, its
      // receive count starting again, so a message dead-lettered this way failed for a fault on every receive.
      if (reason === 'MAX_RECEIVES' && INJECTED_FAULT.test(lastError ?? '')) {
        afterInjectedFaults += 1;
        if (hot) hotAfterInjectedFaults += 1;
        return [];
      }
      return [
        `${hot ? 'hot ' : ''}order ${String(orderId)} dead-lettered (${reason ?? 'no reason'}: ${quoted(lastError)})`,
      ];
    }),
    `${snapshot.deadLetters.length} dead letters, ${afterInjectedFaults} after injected faults on every receive ` +
      `(${hotAfterInjectedFaults} of them hot-SKU orders), none for contention`,
  );
  return results;
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

function quoted(error: unknown): string {
  if (typeof error !== 'string') return 'no error';
  return error.length > QUOTED_ERROR_CHARS ? `${error.slice(0, QUOTED_ERROR_CHARS)}…` : error;
}

/** Counts of how the messages ended (the rogue ones on their own), and of the hot SKU's orders applied. */
export function outcomeCounts(snapshot: DrillSnapshot): Record<string, number> {
  const counts: Record<string, number> = {};
  const add = (name: string) => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  const orderOf = new Map<string, string>();
  for (const message of snapshot.outbox) {
    const rogue = snapshot.rogueMessages.has(String(message.messageId));
    add(rogue ? `rogue messages ${String(message.status)}` : String(message.status));
    orderOf.set(String(message.messageId), String(message.aggregateId));
  }
  let hotApplied = 0;
  for (const row of snapshot.inbox) {
    add(`inbox ${String(row.outcome)}`);
    const orderId = orderOf.get(String(row.messageId));
    if (row.outcome === 'APPLIED' && orderId !== undefined && snapshot.hotOrders.has(orderId))
      hotApplied += 1;
  }
  counts['hot SKU orders APPLIED'] = hotApplied;
  return counts;
}

/** What a drill run counted along the way, besides the tables. */
export type DrillRunFigures = Pick<
  DrillResult,
  'mode' | 'config' | 'injected' | 'deliveries' | 'writeMs' | 'settleMs' | 'simulatedMs' | 'metrics'
> &
  Pick<MetricObservations, 'unreportedCommits'>;

/**
 * The drill's result from the final tables and what the run counted along the way: the invariants of the tables,
 * then those that hold the metrics to the tables.
 */
export function drillResult(
  run: DrillRunFigures,
  snapshot: DrillSnapshot,
  counts: Readonly<Record<string, number>>,
): DrillResult {
  const { unreportedCommits, ...result } = run;
  const unreported = Object.values(unreportedCommits).reduce(
    (sum, { applied, rejected }) => sum + applied + rejected,
    0,
  );
  return {
    ...result,
    counts: {
      ...outcomeCounts(snapshot),
      ...counts,
      'inbox rows whose delivery failed after its commit (in no metric)': unreported,
    },
    invariants: [
      ...checkInvariants(snapshot),
      ...checkMetrics(snapshot, { metrics: run.metrics, unreportedCommits }),
    ],
  };
}

/** The four tables the invariants read. */
export type DrillTable = 'orders' | 'outbox' | 'inbox' | 'inventory';

/** Reads every table the invariants need and adds what the drill did on purpose. */
export async function takeSnapshot(
  read: (table: DrillTable) => Promise<Record<string, unknown>[]> | Record<string, unknown>[],
  facts: Omit<DrillSnapshot, DrillTable>,
): Promise<DrillSnapshot> {
  return {
    orders: await read('orders'),
    outbox: await read('outbox'),
    inbox: await read('inbox'),
    inventory: await read('inventory'),
    ...facts,
  };
}
