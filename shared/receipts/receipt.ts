/**
 * Receipts: a subscriber's word that it applied a message, sent after its own transaction committed to a queue
 * the producer owns. They replace the consumer's write into the producer's outbox, so a subscriber needs no grant
 * on any producer table. Pure and SDK-free: the shape, the wire body, and how receipts are packed into bodies.
 */
import * as z from 'zod/mini';
import { InvalidReceiptError } from '../errors.ts';
import { messageIdSchema } from '../message/envelope.ts';
import { safeParse } from '../validation/safe-parse.ts';

/** Version of the receipt body layout; bumped when a field changes meaning. */
export const RECEIPT_SCHEMA_VERSION = 1 as const;

/**
 * A subscriber's name, as the producer declares it and the subscriber signs its receipts with: lowercase
 * letters, digits and `-`, starting with a letter, at most 40 (it becomes part of keys, queue names and metrics).
 */
export const subscriberNameSchema = z
  .string()
  .check(
    z.regex(
      /^[a-z][a-z0-9-]{0,39}$/,
      'must be a lowercase name of at most 40 letters, digits and -, e.g. inventory',
    ),
  );

/**
 * The longest outcome a receipt carries; a longer one is cut to it where the receipt is made (the outbox keeps
 * 200 of a confirmation's outcome, so nothing an operator would read is lost).
 */
export const MAX_RECEIPT_OUTCOME_LENGTH = 128;

/** A subscriber's word that it applied one message. */
export interface Receipt {
  /** The message's id: the same for every subscriber of it. */
  readonly messageId: string;
  /** Who applied it. */
  readonly subscriber: string;
  /** What applying it did: `APPLIED`, or a business outcome such as `REJECTED_OUT_OF_STOCK`. */
  readonly outcome: string;
  /** When the subscriber's transaction committed (ISO 8601): the delivery's confirmation time. */
  readonly appliedAt: string;
}

const receiptSchema = z.object({
  messageId: messageIdSchema,
  subscriber: subscriberNameSchema,
  outcome: z.string().check(z.minLength(1), z.maxLength(MAX_RECEIPT_OUTCOME_LENGTH)),
  appliedAt: z.iso.datetime(),
});

/**
 * What a receipt body holds. Tolerant of fields a newer sender adds: a receipt cannot be answered with a 400, and
 * refusing one would only cost a redelivery of its message.
 */
const receiptBodySchema = z.object({
  schemaVersion: z.number().check(z.int(), z.minimum(1)),
  receipts: z.array(z.unknown()).check(z.minLength(1)),
});

/**
 * Receipts one SQS message carries at most. One consumer batch (at most 10 SQS messages) makes one body; the
 * bound keeps a body far below the 256 KiB SQS limit (a receipt is about 150 bytes).
 */
export const MAX_RECEIPTS_PER_BODY = 100;

/** The SQS body of `receipts` (1 to {@link MAX_RECEIPTS_PER_BODY}, each checked as the receiver will check it). */
export function receiptBody(receipts: readonly Receipt[]): string {
  assertBodySize(receipts);
  for (const [index, receipt] of receipts.entries()) {
    const read = readReceipt(receipt, inBody(index));
    if (read instanceof InvalidReceiptError) throw read;
  }
  return bodyOf(receipts);
}

/**
 * The SQS body of `receipts` that were each checked already ({@link assertReceipt}), so are not checked again;
 * the 1 to {@link MAX_RECEIPTS_PER_BODY} bound still holds.
 */
export function checkedReceiptBody(receipts: readonly Receipt[]): string {
  assertBodySize(receipts);
  return bodyOf(receipts);
}

function assertBodySize(receipts: readonly Receipt[]): void {
  if (receipts.length === 0 || receipts.length > MAX_RECEIPTS_PER_BODY) {
    throw new RangeError(
      `a receipt body holds 1 to ${MAX_RECEIPTS_PER_BODY} receipts, got ${receipts.length}`,
    );
  }
}

function bodyOf(receipts: readonly Receipt[]): string {
  return JSON.stringify({
    schemaVersion: RECEIPT_SCHEMA_VERSION,
    receipts: receipts.map(({ messageId, subscriber, outcome, appliedAt }) => ({
      messageId,
      subscriber,
      outcome,
      appliedAt,
    })),
  });
}

/** `receipts` cut into bodies of at most `perBody`, in order. */
export function receiptBodies(receipts: readonly Receipt[], perBody = MAX_RECEIPTS_PER_BODY): string[] {
  if (!Number.isInteger(perBody) || perBody < 1 || perBody > MAX_RECEIPTS_PER_BODY) {
    throw new RangeError(
      `receipts per body must be an integer from 1 to ${MAX_RECEIPTS_PER_BODY}, got ${perBody}`,
    );
  }
  const bodies: string[] = [];
  for (let start = 0; start < receipts.length; start += perBody) {
    bodies.push(receiptBody(receipts.slice(start, start + perBody)));
  }
  return bodies;
}

/** Result of reading a receipt body: the receipts it holds, and each one that could not be read, with why. */
export interface ReadReceipts {
  readonly receipts: readonly Receipt[];
  readonly invalid: readonly InvalidReceiptError[];
}

/**
 * The receipts of one SQS body. A body that is not a receipt body at all throws {@link InvalidReceiptError}; a
 * body with some unreadable receipts gives the readable ones and names the others, so one bad entry never holds
 * back the rest (an unread receipt costs one redelivery of its message, never a loss).
 */
export function readReceiptBody(body: string): ReadReceipts {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new InvalidReceiptError('body', `is not JSON (${(error as Error).message})`);
  }
  const envelope = safeParse(receiptBodySchema, parsed);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    throw new InvalidReceiptError(issue?.path.join('.') || 'body', issue?.message ?? 'is not a receipt body');
  }
  // A newer schemaVersion is read as this one: a version bump adds fields, it never renames these four.
  const receipts: Receipt[] = [];
  const invalid: InvalidReceiptError[] = [];
  envelope.data.receipts.forEach((entry, index) => {
    const read = readReceipt(entry, inBody(index));
    if (read instanceof InvalidReceiptError) invalid.push(read);
    else receipts.push(read);
  });
  return { receipts, invalid };
}

/** Throws the {@link InvalidReceiptError} the producer would raise for `receipt`, naming the field. */
export function assertReceipt(receipt: Receipt): void {
  const read = readReceipt(receipt, (field) => `of ${receipt.messageId}${field === '' ? '' : ` ${field}`}`);
  if (read instanceof InvalidReceiptError) throw read;
}

/** Where entry `index` of a body is: `receipts[1]`, `receipts[1].subscriber`. */
function inBody(index: number): (field: string) => string {
  return (field) => `receipts[${index}]${field === '' ? '' : `.${field}`}`;
}

/**
 * `entry` as a receipt, or else the {@link InvalidReceiptError} of its first problem, whose path is `where` of
 * the offending field (`''` when the entry as a whole is not a receipt).
 */
function readReceipt(entry: unknown, where: (field: string) => string): Receipt | InvalidReceiptError {
  const read = safeParse(receiptSchema, entry);
  if (read.success) return read.data;
  const issue = read.error.issues[0];
  return new InvalidReceiptError(
    where(issue?.path.map(String).join('.') ?? ''),
    issue?.message ?? 'is not a receipt',
  );
}
