import { ClaimCheckObjectMissingError } from '../claim-check/claim-check-errors.ts';
import type { ClaimCheckObject, ClaimCheckReference } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckStore } from '../claim-check/claim-check-store.ts';

/** A refusal S3 would answer with: a bucket that was never created. */
export class MemoryObjectStoreError extends Error {
  readonly code = 'NoSuchBucket';

  constructor(bucket: string) {
    super(`bucket ${bucket} does not exist`);
    this.name = 'MemoryObjectStoreError';
  }
}

/** An object as the store keeps it. */
export interface MemoryStoredObject {
  readonly body: Uint8Array;
  /** When it was put (the store's clock), which its bucket's lifecycle expiry counts from. */
  readonly putAt: Date;
}

/** A lifecycle rule: objects under `prefix` expire `expireAfterDays` after they were put. */
export interface MemoryLifecycleRule {
  readonly prefix: string;
  readonly expireAfterDays: number;
}

/**
 * S3 in memory, for claim-checked payloads: buckets must be created first, a put copies the bytes (a caller
 * changing its buffer later changes nothing stored), a missing key is a `ClaimCheckObjectMissingError`, and a
 * bucket's lifecycle rules expire objects when {@link MemoryObjectStore.runLifecycle} is told the time.
 * @example
 * const s3 = new MemoryObjectStore();
 * s3.createBucket('claims', [{ prefix: 'claim-check/', expireAfterDays: 45 }]);
 */
export class MemoryObjectStore implements ClaimCheckStore {
  readonly #buckets = new Map<string, Map<string, MemoryStoredObject>>();
  readonly #rules = new Map<string, readonly MemoryLifecycleRule[]>();
  readonly #clock: () => Date;

  constructor(options: { readonly clock?: () => Date } = {}) {
    this.#clock = options.clock ?? (() => new Date());
  }

  /** Creates an empty bucket with its lifecycle rules. */
  createBucket(bucket: string, lifecycle: readonly MemoryLifecycleRule[] = []): void {
    if (!this.#buckets.has(bucket)) this.#buckets.set(bucket, new Map());
    this.#rules.set(bucket, lifecycle);
  }

  /** @inheritdoc */
  async put(object: ClaimCheckObject): Promise<void> {
    this.#bucket(object.bucket).set(object.key, {
      body: Uint8Array.from(object.body),
      putAt: this.#clock(),
    });
  }

  /** @inheritdoc */
  async get(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<Uint8Array> {
    const stored = this.#bucket(location.bucket).get(location.key);
    if (stored === undefined) throw new ClaimCheckObjectMissingError({ ...location, reason: 'NOT_FOUND' });
    return Uint8Array.from(stored.body);
  }

  /** @inheritdoc */
  async remove(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<void> {
    this.delete(location.bucket, location.key);
  }

  /** Removes an object (an operator, or an expiry); a missing key is no error, as in S3. */
  delete(bucket: string, key: string): void {
    this.#bucket(bucket).delete(key);
  }

  /** Replaces an object's bytes in place, as a writer outside the outbox could. */
  overwrite(bucket: string, key: string, body: Uint8Array): void {
    this.#bucket(bucket).set(key, { body: Uint8Array.from(body), putAt: this.#clock() });
  }

  /** The keys of a bucket, sorted. */
  keys(bucket: string): string[] {
    return [...this.#bucket(bucket).keys()].sort();
  }

  /** Removes every object a lifecycle rule of its bucket has expired by `now`; returns their keys. */
  runLifecycle(now: Date): string[] {
    const expired: string[] = [];
    for (const [bucket, objects] of this.#buckets) {
      for (const [key, stored] of objects) {
        const rule = (this.#rules.get(bucket) ?? []).find((candidate) => key.startsWith(candidate.prefix));
        if (rule === undefined) continue;
        if (now.getTime() - stored.putAt.getTime() >= rule.expireAfterDays * 86_400_000) {
          objects.delete(key);
          expired.push(key);
        }
      }
    }
    return expired.sort();
  }

  #bucket(bucket: string): Map<string, MemoryStoredObject> {
    const objects = this.#buckets.get(bucket);
    if (objects === undefined) throw new MemoryObjectStoreError(bucket);
    return objects;
  }
}
