import { OutboxError, OutboxErrorCode, PoisonMessageError } from '../errors.ts';

/** Why a claim-checked payload could not be fetched. */
export type MissingObjectReason = 'NOT_FOUND' | 'ACCESS_DENIED';

/**
 * The S3 object that holds a claim-checked payload is gone (expired, deleted) or the function may not read it.
 * The message takes the usual failure path — retried with backoff, then dead-lettered with this error as its
 * reason — and is never applied without its payload. S3 answers a reader without `s3:ListBucket` (the shipped
 * consumer's grant) with AccessDenied rather than NoSuchKey for a key that does not exist, hence both reasons.
 */
export class ClaimCheckObjectMissingError extends OutboxError {
  /** The bucket of the reference. */
  readonly bucket: string;
  /** The key of the reference. */
  readonly key: string;
  /** What S3 answered. */
  readonly reason: MissingObjectReason;

  constructor(
    object: { readonly bucket: string; readonly key: string; readonly reason: MissingObjectReason },
    options?: { cause?: unknown },
  ) {
    const answer =
      object.reason === 'NOT_FOUND'
        ? 'does not exist'
        : 'cannot be read (AccessDenied: S3 answers so for a missing key to a reader without s3:ListBucket)';
    super(
      OutboxErrorCode.CLAIM_CHECK_OBJECT_MISSING,
      `the claim-checked payload s3://${object.bucket}/${object.key} ${answer}`,
      options,
    );
    this.bucket = object.bucket;
    this.key = object.key;
    this.reason = object.reason;
  }
}

/**
 * A claim-checked payload that can never be delivered as written: the reference is malformed or points outside
 * the claim-check bucket and prefix, or the object's size or SHA-256 differs from the reference's. A poison
 * message: dead-lettered at once with this reason, since retrying cannot change the bytes.
 */
export class ClaimCheckIntegrityError extends PoisonMessageError {}
