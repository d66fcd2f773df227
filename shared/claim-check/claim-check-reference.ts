/**
 * The claim check: a message too large for its queue keeps its payload in S3 and carries a reference to it.
 * Pure (hashing only): the writer builds the object and the referencing message here, the consumer checks and
 * reads the object back here; the adapters only move bytes.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import type { Envelope } from '../message/envelope.ts';
import { ClaimCheckIntegrityError } from './claim-check-errors.ts';

/**
 * Where claim-checked payloads live in their bucket. The writer's and the consumer's grants and the bucket's
 * lifecycle rule are all scoped to it.
 */
export const CLAIM_CHECK_PREFIX = 'claim-check/';

/**
 * The header that marks a message whose payload is a claim-check reference, with the reference layout version
 * as its value. A producer may not set it itself: the consumer would read an ordinary payload as a reference.
 */
export const CLAIM_CHECK_HEADER = 'outbox-claim-check';

/** The reference layout this library writes. */
export const CLAIM_CHECK_VERSION = '1';

/**
 * Messages larger than this on the wire (body and attributes) go through S3. 64 KiB: SQS bills each 64 KiB of
 * a message as one request, and every status change rewrites the whole outbox item (1 WCU per KB), so above it
 * one S3 PUT and GET cost less than the item; it also leaves a dead-lettered copy room for its reason
 * attributes and the outbox item room for its history, far below SQS's 256 KiB and DynamoDB's 400 KB.
 */
export const DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES = 64 * 1024;

/**
 * The largest threshold: 240 KiB. A message kept inline must still fit SQS's 256 KiB once the consumer adds
 * its dead-letter reason attributes (about 1 KiB) or an operator's redrive adds its own.
 */
export const MAX_CLAIM_CHECK_THRESHOLD_BYTES = 240 * 1024;

/** The smallest threshold: 1 KiB, well above a reference message's own size. */
export const MIN_CLAIM_CHECK_THRESHOLD_BYTES = 1024;

/** What a message carries instead of its payload. */
export interface ClaimCheckReference {
  readonly bucket: string;
  /** `claim-check/<messageId>/<sha256>.json` */
  readonly key: string;
  /** Bytes of the stored object (the payload as UTF-8 JSON). */
  readonly size: number;
  /** SHA-256 of the stored object, lowercase hex. */
  readonly sha256: string;
}

/** The payload of a claim-checked message: the reference under one key, so a reader sees what it is. */
export interface ClaimCheckPayload {
  readonly claimCheck: ClaimCheckReference;
}

/** A payload as it is stored in S3. */
export interface ClaimCheckObject extends ClaimCheckReference {
  /** The payload as UTF-8 JSON. */
  readonly body: Uint8Array;
}

const referenceSchema = z.object({
  claimCheck: z.object({
    bucket: z.string().check(z.minLength(3)),
    key: z.string().check(z.startsWith(CLAIM_CHECK_PREFIX)),
    size: z.number().check(z.int(), z.minimum(0)),
    sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  }),
});

/**
 * The object key of a payload: under the prefix, by message id and content hash. The hash keeps a reused
 * message id (a client's idempotency key retried with a different body) from overwriting the object of the
 * message that committed: its own object lands beside it and expires unused.
 */
export function claimCheckKey(messageId: string, sha256: string): string {
  return `${CLAIM_CHECK_PREFIX}${messageId}/${sha256}.json`;
}

/** The SHA-256 of `bytes`, lowercase hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A message checked in: the object to store first, and the message that refers to it. */
export interface CheckedIn {
  readonly object: ClaimCheckObject;
  readonly message: Envelope<ClaimCheckPayload>;
}

/**
 * Moves `message`'s payload into an object for `bucket` and returns it with the message that carries the
 * reference instead (marked with {@link CLAIM_CHECK_HEADER}); everything else about the message is kept.
 * @example
 * const { object, message: sent } = checkIn(message, { bucket: 'claims' });
 */
export function checkIn(message: Envelope, options: { readonly bucket: string }): CheckedIn {
  const body = Buffer.from(JSON.stringify(message.payload), 'utf8');
  const sha256 = sha256Hex(body);
  const reference: ClaimCheckReference = {
    bucket: options.bucket,
    key: claimCheckKey(message.messageId, sha256),
    size: body.byteLength,
    sha256,
  };
  return {
    object: { ...reference, body },
    message: {
      ...message,
      payload: { claimCheck: reference },
      headers: { ...message.headers, [CLAIM_CHECK_HEADER]: CLAIM_CHECK_VERSION },
    },
  };
}

/**
 * The reference a received message carries, or `undefined` for a message with its payload inline. Throws a
 * {@link ClaimCheckIntegrityError} when the message is marked but its payload is no reference this library
 * reads.
 */
export function claimCheckOf(message: Envelope): ClaimCheckReference | undefined {
  const version = message.headers[CLAIM_CHECK_HEADER];
  if (version === undefined) return undefined;
  const parsed = referenceSchema.safeParse(message.payload);
  if (version !== CLAIM_CHECK_VERSION || !parsed.success) {
    throw new ClaimCheckIntegrityError(
      `message ${message.messageId} is marked ${CLAIM_CHECK_HEADER}: ${version} but carries no claim-check ` +
        `reference version ${CLAIM_CHECK_VERSION} can read`,
    );
  }
  return parsed.data.claimCheck;
}

/**
 * `message` with its payload read back from `body`, the object its reference names, once the size and the
 * SHA-256 match; the marker header is dropped, so the message is the one that was written. Throws a
 * {@link ClaimCheckIntegrityError} when they do not match.
 */
export function checkOut(message: Envelope, reference: ClaimCheckReference, body: Uint8Array): Envelope {
  const sha256 = sha256Hex(body);
  if (body.byteLength !== reference.size || sha256 !== reference.sha256) {
    throw new ClaimCheckIntegrityError(
      `the claim-checked payload s3://${reference.bucket}/${reference.key} of message ${message.messageId} is ` +
        `${body.byteLength} bytes with SHA-256 ${sha256}; the reference says ${reference.size} bytes with ` +
        reference.sha256,
    );
  }
  const { [CLAIM_CHECK_HEADER]: _marker, ...headers } = message.headers;
  return { ...message, payload: JSON.parse(Buffer.from(body).toString('utf8')) as unknown, headers };
}
