import { isReservationKey } from '../../../functions/inventory/reservation.ts';
import {
  AWARD_KEY_PREFIX,
  LOYALTY_TABLE_KEY,
  POINTS_KEY_PREFIX,
} from '../../../functions/loyalty/loyalty-table.ts';
import { cursorKeyOf } from '../../../shared/memory/index.ts';
import { messageIdOfDelivery, SUBSCRIBERS, type Subscriber } from './drill-subscribers.ts';
import { CONTROL_TOPICS } from './inbox-outcomes.ts';
import type { OperatorFacts } from './operator-actions.ts';
import type { ReceiptFacts } from './receipt-faults.ts';
import type { RogueMessage } from './rogue-messages.ts';
import type { StopFacts } from './subscriber-stop.ts';

/** A message in a dead-letter queue: its body and its string attributes (the reason it is there). */
export interface DeadLetterCopy {
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** SQS's receive count when the drill read it (a message the redrive policy moved keeps its source receives). */
  readonly receiveCount?: number;
}

/** What one subscriber's own tables and dead-letter queue hold at the end. */
export interface SubscriberSnapshot {
  /** Its inbox rows, one per delivery applied or rejected (`<messageId>#<subscriber>`), its cursors and parked rows apart. */
  readonly inbox: readonly Record<string, unknown>[];
  /** Its cursor rows (`cursor#<orderKey>#<subscriber>`, `lastSeq`), kept in its inbox table. */
  readonly cursors: readonly Record<string, unknown>[];
  /** Its parked rows (`parked#<orderKey>#<subscriber>#<seq>`): deliveries held for their predecessor. */
  readonly parked: readonly Record<string, unknown>[];
  /** What its consumer's dead-letter queue holds. */
  readonly deadLetters: readonly DeadLetterCopy[];
}

/** The tables' contents at the end of a drill, plus what the drill did on purpose. */
export interface DrillSnapshot {
  readonly orders: readonly Record<string, unknown>[];
  /**
   * The outbox's rows at the end (a delivery row per subscriber of each message), with those the operator erased as
   * they were just before the erase.
   */
  readonly outbox: readonly Record<string, unknown>[];
  /** Erased rows still found in the outbox at the end (there must be none). */
  readonly erasedLeft: readonly string[];
  readonly subscribers: Readonly<Record<Subscriber, SubscriberSnapshot>>;
  /** Stock rows of the inventory service's table (its reservation rows apart). */
  readonly inventory: readonly Record<string, unknown>[];
  /** Reservation rows of the inventory table (`reservation#<orderId>`), one per order holding stock. */
  readonly reservations: readonly Record<string, unknown>[];
  /** Customers' points rows of the loyalty service's table (`customer#<customerId>`). */
  readonly points: readonly Record<string, unknown>[];
  /** Orders' award rows of the loyalty table (`award#<orderId>`): what each order awarded, and when it was revoked. */
  readonly awards: readonly Record<string, unknown>[];
  /** Stock per SKU before the first order. */
  readonly initialStock: ReadonlyMap<string, number>;
  /** Orders whose messages SQS rejects forever, at every subscriber (they must end FAILED, with a reason). */
  readonly poisonedOrders: ReadonlySet<string>;
  /**
   * Orders whose `order.created` alone SQS rejects forever (it must end FAILED) and that are cancelled too: their
   * `order.cancelled` must stall behind it, never applied, while every other order completes.
   */
  readonly stalledOrders: ReadonlySet<string>;
  /** Orders the API acknowledged with 201 (or 409 on a retry of an acknowledged write). */
  readonly acknowledgedOrders: ReadonlySet<string>;
  /** Orders whose cancellation the API acknowledged with 202 (or 409 on a retry of an acknowledged cancel). */
  readonly cancelledOrders: ReadonlySet<string>;
  /** The orders of the burst on the hot SKU. */
  readonly hotOrders: ReadonlySet<string>;
  /**
   * Messages written straight into the outbox behind the writer's back (a delivery row per subscriber), by message id,
   * with what each must fail with. They belong to no order.
   */
  readonly rogueMessages: ReadonlyMap<string, RogueMessage>;
  /** The subscriber queues' maxReceiveCount: after that many receives their redrive policy moves a message itself. */
  readonly maxReceiveCount: number;
  /** What the operator did while the drill ran. */
  readonly operator: OperatorFacts;
  /** What the drill's faults did to the receipts. */
  readonly receipts: ReceiptFacts;
  /** When the stopped subscriber was stopped and started again, and what the other had left open then. */
  readonly stop: StopFacts;
}

/** The tables the invariants read. */
export type DrillTable = 'orders' | 'outbox' | 'inventory' | 'loyalty' | `${Subscriber}Inbox`;

/** What the drill did on purpose, and each subscriber's dead letters, beside the tables. */
export type DrillFacts = Omit<
  DrillSnapshot,
  'orders' | 'outbox' | 'erasedLeft' | 'subscribers' | 'inventory' | 'reservations' | 'points' | 'awards'
> & { readonly deadLetters: Readonly<Record<Subscriber, readonly DeadLetterCopy[]>> };

/** How a consumer's cursor and parked rows' keys begin (`cursorKeyOf`, `parkedKeyOf`). */
const CURSOR_PREFIX = cursorKeyOf('');
const PARKED_PREFIX = 'parked#';

/**
 * Reads every table the invariants need and adds what the drill did on purpose. A subscriber's inbox table also
 * holds its cursor and parked rows, the inventory table its reservation rows, the loyalty table its award rows:
 * each kind is read apart.
 */
export async function takeSnapshot(
  read: (table: DrillTable) => Promise<Record<string, unknown>[]> | Record<string, unknown>[],
  facts: DrillFacts,
): Promise<DrillSnapshot> {
  const { deadLetters, ...rest } = facts;
  const keyed = (row: Record<string, unknown>, prefix: string) => String(row.messageId).startsWith(prefix);
  const subscribers = {} as Record<Subscriber, SubscriberSnapshot>;
  for (const subscriber of SUBSCRIBERS) {
    const table = await read(`${subscriber}Inbox`);
    subscribers[subscriber] = {
      inbox: table.filter((row) => !keyed(row, CURSOR_PREFIX) && !keyed(row, PARKED_PREFIX)),
      cursors: table.filter((row) => keyed(row, CURSOR_PREFIX)),
      parked: table.filter((row) => keyed(row, PARKED_PREFIX)),
      deadLetters: deadLetters[subscriber],
    };
  }
  const inventoryTable = await read('inventory');
  const loyaltyTable = await read('loyalty');
  const outbox = await read('outbox');
  const live = new Set(outbox.map((row) => String(row.messageId)));
  const erasedLeft = facts.operator.erased.map((row) => String(row.messageId)).filter((key) => live.has(key));
  const loyaltyKey = (row: Record<string, unknown>) => String(row[LOYALTY_TABLE_KEY]);
  return {
    orders: await read('orders'),
    // The erased rows as they were, so that the order ledger and the metrics still add up.
    outbox: [...outbox, ...facts.operator.erased.filter((row) => !live.has(String(row.messageId)))],
    erasedLeft,
    subscribers,
    inventory: inventoryTable.filter((row) => !isReservationKey(String(row.sku))),
    reservations: inventoryTable.filter((row) => isReservationKey(String(row.sku))),
    points: loyaltyTable.filter((row) => loyaltyKey(row).startsWith(POINTS_KEY_PREFIX)),
    awards: loyaltyTable.filter((row) => loyaltyKey(row).startsWith(AWARD_KEY_PREFIX)),
    ...rest,
  };
}

/** One order message (`order.created` or `order.cancelled`) and its delivery row at each subscriber. */
export interface OrderMessage {
  readonly messageId: string;
  readonly orderId: string;
  readonly topic: string;
  readonly deliveries: ReadonlyMap<Subscriber, Record<string, unknown>>;
}

/**
 * The outbox's rows as the invariants read them: each order's messages with their deliveries by subscriber, the
 * rogue messages' rows, the operator's control messages' rows, and any row that is none of these.
 */
export class OutboxIndex {
  readonly byKey = new Map<string, Record<string, unknown>>();
  /** Order messages by message id. */
  readonly messages = new Map<string, OrderMessage>();
  readonly byOrder = new Map<string, OrderMessage[]>();
  readonly rogueRows: Record<string, unknown>[] = [];
  readonly controlRows: Record<string, unknown>[] = [];
  /** Rows of no subscriber's delivery of an order, rogue or control message: none should exist. */
  readonly strayRows: Record<string, unknown>[] = [];

  constructor(rows: readonly Record<string, unknown>[], rogueMessages: ReadonlyMap<string, unknown>) {
    for (const row of rows) {
      const key = String(row.messageId);
      this.byKey.set(key, row);
      const subscriber = SUBSCRIBERS.find((name) => name === row.subscriber);
      const messageId = subscriber === undefined ? undefined : messageIdOfDelivery(key, subscriber);
      if (subscriber === undefined || messageId === undefined) {
        this.strayRows.push(row);
        continue;
      }
      if (rogueMessages.has(messageId)) {
        this.rogueRows.push(row);
        continue;
      }
      if (row.topic === CONTROL_TOPICS.erase || row.topic === CONTROL_TOPICS.skip) {
        this.controlRows.push(row);
        continue;
      }
      let message = this.messages.get(messageId);
      if (message === undefined) {
        message = {
          messageId,
          orderId: String(row.aggregateId),
          topic: String(row.topic),
          deliveries: new Map(),
        };
        this.messages.set(messageId, message);
        const ofOrder = this.byOrder.get(message.orderId) ?? [];
        ofOrder.push(message);
        this.byOrder.set(message.orderId, ofOrder);
      }
      (message.deliveries as Map<Subscriber, Record<string, unknown>>).set(subscriber, row);
    }
  }

  /** The order's message of `topic`. */
  message(orderId: string, topic: string): OrderMessage | undefined {
    return this.byOrder.get(orderId)?.find((message) => message.topic === topic);
  }

  /** `subscriber`'s delivery row of the order's message of `topic`. */
  delivery(orderId: string, topic: string, subscriber: Subscriber): Record<string, unknown> | undefined {
    return this.message(orderId, topic)?.deliveries.get(subscriber);
  }

  /** Every delivery row of every order message, with its subscriber and message. */
  *deliveries(): Generator<{ subscriber: Subscriber; row: Record<string, unknown>; message: OrderMessage }> {
    for (const message of this.messages.values()) {
      for (const [subscriber, row] of message.deliveries) yield { subscriber, row, message };
    }
  }
}
