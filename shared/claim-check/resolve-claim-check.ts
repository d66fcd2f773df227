import { ConfigError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import { ClaimCheckIntegrityError } from './claim-check-errors.ts';
import { CLAIM_CHECK_PREFIX, checkOut, claimCheckOf } from './claim-check-reference.ts';
import type { ClaimCheckReading } from './claim-check-store.ts';

/**
 * The message a consumer's plan sees: `message` itself when its payload is inline, or the payload fetched from
 * the claim check, size and SHA-256 verified, otherwise. Never a message without its payload: throws a
 * `ClaimCheckObjectMissingError` (retried, then dead-lettered) when the object is gone, a
 * {@link ClaimCheckIntegrityError} (dead-lettered at once) when it does not match or lies outside the bucket
 * and prefix this consumer reads, and a `ConfigError` naming CLAIM_CHECK_BUCKET when the consumer reads no
 * claim checks at all.
 * @example
 * const message = await resolveClaimCheck(received, { store, bucket: 'claims' });
 */
export async function resolveClaimCheck(
  message: Envelope,
  reading: ClaimCheckReading | undefined,
): Promise<Envelope> {
  const reference = claimCheckOf(message);
  if (reference === undefined) return message;
  if (reading === undefined) {
    throw new ConfigError(
      `CLAIM_CHECK_BUCKET is not set: message ${message.messageId} carries its payload in ` +
        `s3://${reference.bucket}/${reference.key}, which this consumer does not read`,
    );
  }
  // A reference is data from the queue: it may only lead to objects the claim check itself wrote.
  if (reference.bucket !== reading.bucket || !reference.key.startsWith(CLAIM_CHECK_PREFIX)) {
    throw new ClaimCheckIntegrityError(
      `message ${message.messageId} refers to s3://${reference.bucket}/${reference.key}, outside ` +
        `s3://${reading.bucket}/${CLAIM_CHECK_PREFIX}`,
    );
  }
  const body = await reading.store.get(reference);
  return checkOut(message, reference, body);
}
