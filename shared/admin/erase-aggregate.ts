import {
  CLAIM_CHECK_HEADER,
  type ClaimCheckReference,
  claimCheckOf,
} from '../claim-check/claim-check-reference.ts';
import { ConfigError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { AdminDeps } from './admin-deps.ts';
import { AggregateInFlightError } from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';

/** A data-protection erase of one aggregate. */
export interface EraseInput {
  readonly aggregateId: string;
  readonly reason: string;
  readonly actor: string;
}

/** What an erase removed. */
export interface EraseResult {
  readonly aggregateId: string;
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
  /** The ERASE audit row's id. */
  readonly actionId: string;
}

/** Statuses with a delivery still ahead: their messages must not be erased. */
const IN_FLIGHT: readonly string[] = [MessageStatus.PENDING, MessageStatus.SENT];

type Deps = Pick<
  AdminDeps,
  'outbox' | 'audit' | 'inboxes' | 'deliveryInboxes' | 'clock' | 'newId' | 'claimCheck'
>;

/**
 * Erases one aggregate's messages for a data-protection request: refused with {@link AggregateInFlightError}
 * (409) while any of them is PENDING or SENT; otherwise deletes each message (conditional on it not being PENDING
 * or SENT, so a message replayed meanwhile is kept and reported in `skippedInFlight`), then what still holds its
 * payload: a consumer's parked row of it (only the row that holds this message), and its claim-checked S3 object
 * (once the message itself is gone: a message replayed meanwhile keeps its payload; an aggregate with such payloads
 * is refused up front when the admin has no claim-check bucket). An ERASE audit row holds counts only.
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
  const messages = await messagesOf(deps, aggregateId);
  const inFlight = messages.filter((message) => IN_FLIGHT.includes(message.status));
  if (inFlight.length > 0) throw new AggregateInFlightError(aggregateId, inFlight);
  if (deps.claimCheck === undefined && messages.some((message) => message.claimChecked)) {
    throw new ConfigError(
      `aggregate ${aggregateId} has claim-checked payloads and CLAIM_CHECK_BUCKET is not set: erasing it would ` +
        'leave them in S3',
    );
  }

  const inboxes = [...new Set(Object.values(deps.deliveryInboxes))];
  let messagesDeleted = 0;
  let parkedRowsDeleted = 0;
  let claimCheckObjectsDeleted = 0;
  const claimCheckObjectsNotDeleted: string[] = [];
  const skippedInFlight: string[] = [];
  for (const { messageId } of messages) {
    // The message first, and only if it has no delivery ahead of it: one replayed since the read stays whole.
    const deleted = await deps.outbox.deleteFinished(messageId);
    if (deleted === 'IN_FLIGHT') {
      skippedInFlight.push(messageId);
      continue;
    }
    if (deleted === undefined) continue;
    messagesDeleted += 1;
    const place = placeOf(deleted);
    if (place !== undefined) {
      for (const inboxTable of inboxes) {
        if (await deps.inboxes.deleteParked({ inboxTable, messageId, ...place })) parkedRowsDeleted += 1;
      }
    }
    const reference = storedReference(deleted);
    if (reference !== undefined && deps.claimCheck !== undefined) {
      try {
        await deps.claimCheck.store.remove(reference);
        claimCheckObjectsDeleted += 1;
      } catch {
        claimCheckObjectsNotDeleted.push(reference.key);
      }
    }
  }
  const actionId = deps.newId();
  await deps.audit.put({
    subject: auditSubject.aggregate(aggregateId),
    actionId,
    at: deps.clock().toISOString(),
    action: AuditAction.ERASE,
    actor,
    reason,
    details: {
      messagesDeleted,
      parkedRowsDeleted,
      claimCheckObjectsDeleted,
      claimCheckObjectsNotDeleted: claimCheckObjectsNotDeleted.length,
      skippedInFlight: skippedInFlight.length,
    },
  });
  return {
    aggregateId,
    messagesDeleted,
    parkedRowsDeleted,
    claimCheckObjectsDeleted,
    claimCheckObjectsNotDeleted,
    skippedInFlight,
    actionId,
  };
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

/** Every message of the aggregate (ids from the byAggregate index, then each read by key), with its status. */
async function messagesOf(
  deps: Pick<AdminDeps, 'outbox'>,
  aggregateId: string,
): Promise<{ messageId: string; status: string; claimChecked: boolean }[]> {
  const items = await deps.outbox.readAggregate(aggregateId, ['status', 'headers']);
  return items.map((item) => {
    const headers = item.headers as Record<string, unknown> | undefined;
    return {
      messageId: String(item.messageId),
      status: String(item.status),
      claimChecked: headers?.[CLAIM_CHECK_HEADER] !== undefined,
    };
  });
}
