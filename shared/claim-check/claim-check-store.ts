import type { ClaimCheckObject, ClaimCheckReference } from './claim-check-reference.ts';

/** Where claim-checked payloads are kept: S3 in production, memory in tests. */
export interface ClaimCheckStore {
  /** Stores the object under its bucket and key (replacing an identical one: the key names the content). */
  put(object: ClaimCheckObject): Promise<void>;
  /**
   * The bytes of the object `location` names; a `ClaimCheckObjectMissingError` when it does not exist or may
   * not be read.
   */
  get(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<Uint8Array>;
  /** Deletes the object (an erase); a missing one is no error, as in S3. */
  remove(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<void>;
}

/** What a writer needs to claim-check large payloads. */
export interface ClaimCheckWriting {
  readonly store: ClaimCheckStore;
  /** The bucket the payloads go to. */
  readonly bucket: string;
  /**
   * Messages larger than this on the wire go through S3.
   * @default DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES (64 KiB)
   */
  readonly thresholdBytes?: number;
}

/** What a consumer needs to read claim-checked payloads. */
export interface ClaimCheckReading {
  readonly store: ClaimCheckStore;
  /** The only bucket references may name (under the claim-check prefix). */
  readonly bucket: string;
}
