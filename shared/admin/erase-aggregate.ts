import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import {
  CLAIM_CHECK_HEADER,
  type ClaimCheckReference,
  claimCheckOf,
} from '../claim-check/claim-check-reference.ts';
import { INBOX_KEYS } from '../consumer/inbox.ts';
import { ConfigError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import { readAggregateMessages } from '../outbox/aggregate-messages.ts';
import { OUTBOX_KEYS } from '../outbox/outbox-item.ts';
import type { AdminDeps } from './admin-deps.ts';
import { AggregateInFlightError } from './admin-errors.ts';
import { requireActor, requireReason, requireText } from './admin-input.ts';
import { AuditAction, auditSubject, putAuditRow } from './audit-trail.ts';

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
  readonly inboxRowsDeleted: number;
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
  'client' | 'outboxTable' | 'auditTable' | 'deliveryInboxes' | 'clock' | 'newId' | 'claimCheck'
>;

/**
 * Erases one aggregate's messages for a data-protection request: refused with {@link AggregateInFlightError}
 * (409) while any of them is PENDING or SENT; otherwise deletes each message's inbox row from every delivery
 * inbox, then the message itself (so an interrupted erase, run again, still finds what is left), and files an
 * ERASE audit row with counts only. A message whose payload was claim-checked has its S3 object deleted once
 * the message itself is gone (never before: a message replayed meanwhile keeps its payload); an aggregate with
 * such payloads is refused up front when the admin has no claim-check bucket. The delete is conditional on the message not being PENDING or SENT, so a
 * message replayed meanwhile is kept and reported.
 *
 * Erasing inbox rows erases the consumers' record that they applied the messages: a copy still waiting in a
 * queue or a dead-letter queue would be applied again. Purge those first (or erase once they are gone). The
 * aggregate's messages are found through the byAggregate index, which lags writes by a moment: a message written
 * for the aggregate while it is being erased may be missed; erase after the aggregate stops changing. Only the
 * inboxes of DELIVERY_INBOXES are cleared.
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
  let inboxRowsDeleted = 0;
  let claimCheckObjectsDeleted = 0;
  const claimCheckObjectsNotDeleted: string[] = [];
  const skippedInFlight: string[] = [];
  for (const { messageId } of messages) {
    for (const inboxTable of inboxes) {
      const deleted = await deps.client.send(
        new DeleteCommand({
          TableName: inboxTable,
          Key: { [INBOX_KEYS.partitionKey]: messageId },
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (deleted.Attributes !== undefined) inboxRowsDeleted += 1;
    }
    try {
      const deleted = await deps.client.send(
        new DeleteCommand({
          TableName: deps.outboxTable,
          Key: { [OUTBOX_KEYS.partitionKey]: messageId },
          ConditionExpression: 'NOT (#status IN (:pending, :sent))',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':pending': MessageStatus.PENDING, ':sent': MessageStatus.SENT },
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (deleted.Attributes !== undefined) messagesDeleted += 1;
      const reference = deleted.Attributes === undefined ? undefined : storedReference(deleted.Attributes);
      if (reference !== undefined && deps.claimCheck !== undefined) {
        try {
          await deps.claimCheck.store.remove(reference);
          claimCheckObjectsDeleted += 1;
        } catch {
          claimCheckObjectsNotDeleted.push(reference.key);
        }
      }
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      skippedInFlight.push(messageId);
    }
  }
  const actionId = deps.newId();
  await putAuditRow(deps.client, deps.auditTable, {
    subject: auditSubject.aggregate(aggregateId),
    actionId,
    at: deps.clock().toISOString(),
    action: AuditAction.ERASE,
    actor,
    reason,
    details: {
      messagesDeleted,
      inboxRowsDeleted,
      claimCheckObjectsDeleted,
      claimCheckObjectsNotDeleted: claimCheckObjectsNotDeleted.length,
      skippedInFlight: skippedInFlight.length,
    },
  });
  return {
    aggregateId,
    messagesDeleted,
    inboxRowsDeleted,
    claimCheckObjectsDeleted,
    claimCheckObjectsNotDeleted,
    skippedInFlight,
    actionId,
  };
}

/** The claim-check reference of a stored message, or `undefined` when its payload is inline or unreadable. */
function storedReference(item: Record<string, unknown>): ClaimCheckReference | undefined {
  try {
    return claimCheckOf({ ...item, headers: item.headers ?? {} } as unknown as Envelope);
  } catch {
    return undefined;
  }
}

/** Every message of the aggregate (ids from the byAggregate index, then each read by key), with its status. */
async function messagesOf(
  deps: Pick<AdminDeps, 'client' | 'outboxTable'>,
  aggregateId: string,
): Promise<{ messageId: string; status: string; claimChecked: boolean }[]> {
  const items = await readAggregateMessages(deps, { aggregateId, attributes: ['status', 'headers'] });
  return items.map((item) => {
    const headers = item.headers as Record<string, unknown> | undefined;
    return {
      messageId: String(item.messageId),
      status: String(item.status),
      claimChecked: headers?.[CLAIM_CHECK_HEADER] !== undefined,
    };
  });
}
