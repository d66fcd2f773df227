import {
  CLAIM_CHECK_HEADER,
  type ClaimCheckReference,
  claimCheckOf,
} from '../claim-check/claim-check-reference.ts';
import { ConfigError } from '../errors.ts';
import { type ErasedMessage, MAX_ERASE_ENTRIES } from '../message/control-message.ts';
import { ControlTopic, isControlTopic } from '../message/control-topics.ts';
import type { Envelope } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import { messageIdOf, orderKeyOf } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { AggregateInFlightError } from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';
import { controlRequest, type SentControl } from './control-requests.ts';

/** A data-protection erase of one aggregate. */
export interface EraseInput {
  readonly aggregateId: string;
  readonly reason: string;
  readonly actor: string;
}

/** What an erase removed. */
export interface EraseResult {
  readonly aggregateId: string;
  /** Messages deleted from the outbox (a message delivered to subscribers counts once, whatever its deliveries). */
  readonly messagesDeleted: number;
  /**
   * Messages a consumer still held parked (the message as received, payload included) deleted from its inbox:
   * a message of an ordered topic that arrived before its predecessor and was never applied.
   */
  readonly parkedRowsDeleted: number;
  /** Claim-checked payloads deleted from S3 with their messages. */
  readonly claimCheckObjectsDeleted: number;
  /**
   * Keys of payload objects whose message was erased but whose delete failed: delete them by hand (they
   * expire with the bucket's lifecycle otherwise).
   */
  readonly claimCheckObjectsNotDeleted: readonly string[];
  /** Messages that started a delivery while the erase ran: kept, erase again once they are confirmed. */
  readonly skippedInFlight: readonly string[];
  /**
   * The `outbox.erase` messages written for the subscribers that had deliveries of the aggregate's messages (one per
   * subscriber; more for an aggregate of over {@link MAX_ERASE_ENTRIES} messages). Each subscriber's consumer
   * deletes its parked copies of them; its receipt confirms the erase's delivery with outcome `ERASED`.
   */
  readonly erasesSent: readonly SentControl[];
  /** The ERASE audit row's id. */
  readonly actionId: string;
}

/** Statuses with a delivery still ahead: their messages must not be erased. */
const IN_FLIGHT: readonly string[] = [MessageStatus.PENDING, MessageStatus.SENT];

type Deps = Pick<
  AdminDeps,
  | 'outbox'
  | 'audit'
  | 'inboxes'
  | 'transactions'
  | 'deliveryInboxes'
  | 'dueShards'
  | 'clock'
  | 'newId'
  | 'claimCheck'
>;

/**
 * Erases one aggregate's messages for a data-protection request: refused with {@link AggregateInFlightError}
 * (409) while any of them (any delivery of them) is PENDING or SENT; otherwise deletes each message (conditional on
 * it not being PENDING or SENT, so a message replayed meanwhile is kept and reported in `skippedInFlight`), then what
 * still holds its payload: a consumer's parked row of it (only the row that holds this message), and its
 * claim-checked S3 object (once every row of the message is gone: a message replayed meanwhile keeps its payload;
 * an aggregate with such payloads is refused up front when the admin has no claim-check bucket). An ERASE audit row
 * holds counts only.
 *
 * A subscriber is a service of its own, whose inbox the producer holds no grant on: each subscriber that had
 * deliveries of the aggregate's messages is sent an `outbox.erase` message instead, listing those messages by id
 * (with their order key and seq when ordered; never a payload), which its consumer applies itself (`consumeControl`)
 * and confirms by receipt with outcome `ERASED`. They are written before the outbox rows are deleted, so an erase
 * stopped halfway and run again still reaches every subscriber. The outbox's own messages about the aggregate (the
 * erases and skips sent before, ids only) are neither erased nor in the way: they stay as the record of what each
 * subscriber answered, and expire with the retention once confirmed.
 *
 * Erase never deletes a consumer's dedupe state: the inbox rows (message id, topic, outcome, times — no payload)
 * and the ordered topics' cursors (order key, last seq) stay until they expire with the inbox retention. A copy of
 * an erased message may still wait in a queue or a dead-letter queue (delivery is at least once, and a cancelled or
 * confirmed message may have copies from earlier rounds); with its inbox row gone it would be applied a second
 * time. Such a copy carries the payload until it is consumed or expires with its queue's retention. The aggregate's
 * messages are found through the byAggregate index, which lags writes by a moment: a message written for the
 * aggregate while it is being erased may be missed; erase after the aggregate stops changing.
 * @example
 * await eraseAggregate(deps, { aggregateId: 'order-17', reason: 'GDPR request #881', actor });
 */
export async function eraseAggregate(deps: Deps, input: EraseInput): Promise<EraseResult> {
  const aggregateId = requireText('aggregateId', input.aggregateId);
  const reason = requireReason('erase', input.reason);
  const actor = requireActor(input.actor);
  const rows = (await rowsOf(deps, aggregateId)).filter((row) => !isControlTopic(row.topic));
  const inFlight = rows.filter((row) => IN_FLIGHT.includes(row.status));
  if (inFlight.length > 0) {
    throw new AggregateInFlightError(
      aggregateId,
      inFlight.map(({ rowId, status }) => ({ messageId: rowId, status })),
    );
  }
  if (deps.claimCheck === undefined && rows.some((row) => row.claimChecked)) {
    throw new ConfigError(
      `aggregate ${aggregateId} has claim-checked payloads and CLAIM_CHECK_BUCKET is not set: erasing it would ` +
        'leave them in S3',
    );
  }

  const actionId = deps.newId();
  const erasesSent = await sendErases(deps, { aggregateId, rows, actionId });
  const inboxes = [...new Set(Object.values(deps.deliveryInboxes))];
  const deletedMessages = new Set<string>();
  let parkedRowsDeleted = 0;
  const skippedInFlight: string[] = [];
  // The payload object of each message with a row deleted, and the messages with a row kept.
  const references = new Map<string, ClaimCheckReference>();
  const kept = new Set<string>();
  for (const row of rows) {
    // The row first, and only if it has no delivery ahead of it: one replayed since the read stays whole.
    const deleted = await deps.outbox.deleteFinished(row.rowId);
    if (deleted === 'IN_FLIGHT') {
      skippedInFlight.push(row.rowId);
      kept.add(row.messageId);
      continue;
    }
    if (deleted === undefined) continue;
    deletedMessages.add(row.messageId);
    const place = placeOf(deleted);
    // A subscriber's parked rows are its own consumer's to delete (the erase sent to it above).
    if (place !== undefined && row.subscriber === undefined) {
      for (const inboxTable of inboxes) {
        if (await deps.inboxes.deleteParked({ inboxTable, messageId: row.rowId, ...place })) {
          parkedRowsDeleted += 1;
        }
      }
    }
    const reference = storedReference(deleted);
    if (reference !== undefined) references.set(row.messageId, reference);
  }
  let claimCheckObjectsDeleted = 0;
  const claimCheckObjectsNotDeleted: string[] = [];
  for (const [messageId, reference] of references) {
    // Every delivery of a message shares its object: it goes only with the last of them.
    if (kept.has(messageId) || deps.claimCheck === undefined) continue;
    try {
      await deps.claimCheck.store.remove(reference);
      claimCheckObjectsDeleted += 1;
    } catch {
      claimCheckObjectsNotDeleted.push(reference.key);
    }
  }
  await deps.audit.put({
    subject: auditSubject.aggregate(aggregateId),
    actionId,
    at: deps.clock().toISOString(),
    action: AuditAction.ERASE,
    actor,
    reason,
    details: {
      messagesDeleted: deletedMessages.size,
      parkedRowsDeleted,
      claimCheckObjectsDeleted,
      claimCheckObjectsNotDeleted: claimCheckObjectsNotDeleted.length,
      skippedInFlight: skippedInFlight.length,
      ...(erasesSent.length === 0
        ? {}
        : { erasesSent: erasesSent.map((sent) => `${sent.subscriber} ${sent.messageId}`) }),
    },
  });
  return {
    aggregateId,
    messagesDeleted: deletedMessages.size,
    parkedRowsDeleted,
    claimCheckObjectsDeleted,
    claimCheckObjectsNotDeleted,
    skippedInFlight,
    erasesSent,
    actionId,
  };
}

/**
 * Writes an `outbox.erase` message for each subscriber with deliveries among `rows` (several for more than
 * {@link MAX_ERASE_ENTRIES} messages), each put on its own (a long list makes a large item, and a transaction holds
 * at most 4 MB); the erase's action id makes their idempotency tokens, so an SDK retry of a lost response is
 * answered, not refused.
 */
async function sendErases(
  deps: Deps,
  erase: { readonly aggregateId: string; readonly rows: readonly AggregateRow[]; readonly actionId: string },
): Promise<SentControl[]> {
  const bySubscriber = new Map<string, ErasedMessage[]>();
  for (const row of erase.rows) {
    if (row.subscriber === undefined) continue;
    const entries = bySubscriber.get(row.subscriber) ?? [];
    entries.push({
      messageId: row.messageId,
      ...(row.orderKey === undefined || row.seq === undefined
        ? {}
        : { orderKey: row.orderKey, seq: row.seq }),
    });
    bySubscriber.set(row.subscriber, entries);
  }
  const now = deps.clock();
  const requests = [...bySubscriber].flatMap(([subscriber, entries]) =>
    chunksOf(entries, MAX_ERASE_ENTRIES).map((messages) =>
      controlRequest(deps, {
        topic: ControlTopic.ERASE,
        subscriber,
        aggregateId: erase.aggregateId,
        payload: { messages },
        now,
      }),
    ),
  );
  for (const [n, request] of requests.entries()) {
    await deps.transactions.write([request.action], `${erase.actionId}-${n}`);
  }
  return requests.map((request) => request.sent);
}

/** `items` in runs of at most `size`, in order. */
function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** An ordered message's order key and seq, from its stored item. */
function placeOf(item: Readonly<Record<string, unknown>>): { orderKey: string; seq: number } | undefined {
  const { orderKey, seq } = item;
  return typeof orderKey === 'string' && typeof seq === 'number' ? { orderKey, seq } : undefined;
}

/** The claim-check reference of a stored message, or `undefined` when its payload is inline or unreadable. */
function storedReference(item: Readonly<Record<string, unknown>>): ClaimCheckReference | undefined {
  try {
    return claimCheckOf({ ...item, headers: item.headers ?? {} } as unknown as Envelope);
  } catch {
    return undefined;
  }
}

/** One outbox row of the aggregate: a message, or one subscriber's delivery of it. */
interface AggregateRow {
  /** The row's key: the message id, or `<messageId>#<subscriber>` for a delivery. */
  readonly rowId: string;
  /** The message's own id (the id on the wire). */
  readonly messageId: string;
  readonly status: string;
  readonly topic: string;
  readonly subscriber?: string;
  /** The order key as the message carries it on the wire, and its seq: an ordered message only. */
  readonly orderKey?: string;
  readonly seq?: number;
  readonly claimChecked: boolean;
}

/** Every row of the aggregate (keys from the byAggregate index, then each read by key). */
async function rowsOf(deps: Pick<AdminDeps, 'outbox'>, aggregateId: string): Promise<AggregateRow[]> {
  const items = await deps.outbox.readAggregate(aggregateId, [
    'status',
    'headers',
    'topic',
    'subscriber',
    'orderKey',
    'seq',
  ]);
  return items.map((item) => {
    const headers = item.headers as Record<string, unknown> | undefined;
    const rowId = String(item.messageId);
    const subscriber = typeof item.subscriber === 'string' ? item.subscriber : undefined;
    const orderKey = typeof item.orderKey === 'string' ? item.orderKey : undefined;
    return {
      rowId,
      messageId: messageIdOf({ messageId: rowId, ...(subscriber === undefined ? {} : { subscriber }) }),
      status: String(item.status),
      topic: String(item.topic ?? ''),
      ...(subscriber === undefined ? {} : { subscriber }),
      ...(orderKey === undefined || typeof item.seq !== 'number'
        ? {}
        : {
            orderKey:
              orderKeyOf({ orderKey, ...(subscriber === undefined ? {} : { subscriber }) }) ?? orderKey,
            seq: item.seq,
          }),
      claimChecked: headers?.[CLAIM_CHECK_HEADER] !== undefined,
    };
  });
}
