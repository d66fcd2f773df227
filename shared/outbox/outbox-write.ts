import { CLAIM_CHECK_HEADER, type ClaimCheckObject, checkIn } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckWriting } from '../claim-check/claim-check-store.ts';
import { ConfigError, InvalidMessageError } from '../errors.ts';
import { assertValidMessage, type Envelope } from '../message/envelope.ts';
import { messageSizeBytes } from '../message/message-size.ts';
import { type AggregateVersions, countedOrderKeys } from '../ordering/assign-seqs.ts';
import type { OrderingByTopic } from '../ordering/ordering.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';
import { type OptionRange, OUTBOX_WRITER_DEFAULTS, OUTBOX_WRITER_RANGES } from './outbox-defaults.ts';

/*
 * The writer's pure part: what a write is, and every check that needs nothing from DynamoDB. The DynamoDB writer
 * (`shared/aws/outbox-writer.ts`) runs these first, then builds the transaction once and sends it.
 */

/** Business actions and the messages that must follow them, committed together or not at all. */
export interface OutboxWrite {
  /** Business actions in lib-dynamodb form (Put / Update / Delete / ConditionCheck). */
  readonly actions: readonly TransactWriteAction[];
  /** Envelopes to put in the outbox (see `createMessage`). At least one. */
  readonly messages: readonly Envelope[];
  /**
   * For ordered topics: the version each aggregate has after this write, by aggregate id, when the business
   * actions set it under a condition (`version = V - 1`). That aggregate's ordered messages in the write take the
   * seqs ending at V (one message: seq V; two: V - 1 and V) and no sequence counter is read or written, since the
   * version's condition already keeps two writers from numbering the same place. The version must grow by the
   * number of the aggregate's ordered messages in each write, or a consumer waits for a seq that never comes.
   * @default - none: ordered messages are numbered from the sequence table
   */
  readonly aggregateVersions?: AggregateVersions;
}

/** A write whose large payloads were moved into claim-check objects. */
export interface ClaimCheckedWrite {
  /** The write to commit: every large message replaced by one that refers to its object. */
  readonly write: OutboxWrite;
  /** The objects to store before the transaction, one per large message. */
  readonly objects: readonly ClaimCheckObject[];
}

/**
 * Moves the payload of every message larger than the threshold on the wire (body and attributes, as SQS counts
 * them) into a claim-check object; a message at or below it is left as it is. Pure.
 */
export function claimCheckWrite(
  write: OutboxWrite,
  claimCheck: Omit<ClaimCheckWriting, 'store'>,
): ClaimCheckedWrite {
  const thresholdBytes = thresholdOf(claimCheck);
  for (const message of write.messages) {
    assertValidMessage(message);
    assertNoClaimCheckMarker(message);
  }
  return checkInLargePayloads(write, { bucket: claimCheck.bucket, thresholdBytes });
}

/** The claim check's threshold, its default taken, refused as CLAIM_CHECK_THRESHOLD_BYTES would be. */
export function thresholdOf(claimCheck: Omit<ClaimCheckWriting, 'store'>): number {
  return integerOption(
    OUTBOX_WRITER_RANGES.claimCheckThresholdBytes,
    claimCheck.thresholdBytes ?? OUTBOX_WRITER_DEFAULTS.claimCheckThresholdBytes,
  );
}

/** `value` when it is a whole number within `range`; otherwise the ConfigError its setting gives for it. */
export function integerOption(range: OptionRange, value: number): number {
  if (Number.isInteger(value) && value >= range.min && value <= range.max) return value;
  throw new ConfigError(
    `${range.setting} must be an integer from ${range.min} to ${range.max}, got ${JSON.stringify(value)}`,
  );
}

/**
 * Checks the messages before they are numbered: first what the numbering refuses (an `orderKey` or `seq` of the
 * producer's, an order key too long, a missing version), then each envelope. Returns the order keys numbered
 * from the sequence table's counters.
 */
export function assertValidMessages(write: OutboxWrite, ordering: OrderingByTopic | undefined): string[] {
  const orderKeys = countedOrderKeys(write.messages, {
    ordering,
    aggregateVersions: write.aggregateVersions,
  });
  for (const message of write.messages) assertValidMessage(message);
  return orderKeys;
}

/** {@link claimCheckWrite} for messages already checked. */
export function checkInLargePayloads(
  write: OutboxWrite,
  claimCheck: { readonly bucket: string; readonly thresholdBytes: number },
): ClaimCheckedWrite {
  const objects: ClaimCheckObject[] = [];
  const messages = write.messages.map((message) => {
    if (messageSizeBytes(message) <= claimCheck.thresholdBytes) return message;
    const checkedIn = checkIn(message, { bucket: claimCheck.bucket });
    objects.push(checkedIn.object);
    return checkedIn.message;
  });
  return { write: { ...write, messages }, objects };
}

/** The claim-check marker is the library's: a producer setting it would make a consumer misread the payload. */
export function assertNoClaimCheckMarker(message: Envelope): void {
  if (message.headers[CLAIM_CHECK_HEADER] !== undefined) {
    throw new InvalidMessageError(
      `headers["${CLAIM_CHECK_HEADER}"]`,
      'is set by the claim check only; use another header name',
    );
  }
}
