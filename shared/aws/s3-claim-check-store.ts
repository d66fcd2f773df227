import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { ClaimCheckObjectMissingError, type MissingObjectReason } from '../claim-check/claim-check-errors.ts';
import type { ClaimCheckObject, ClaimCheckReference } from '../claim-check/claim-check-reference.ts';
import type { ClaimCheckStore } from '../claim-check/claim-check-store.ts';

/** Claim-checked payloads in S3: one PutObject per large message, one GetObject per delivery. */
export class S3ClaimCheckStore implements ClaimCheckStore {
  readonly #client: S3Client;

  constructor(client: S3Client) {
    this.#client = client;
  }

  /** Puts the payload; S3 checks the SHA-256 it is sent with, so a corrupted upload is refused. */
  async put(object: ClaimCheckObject): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({
        Bucket: object.bucket,
        Key: object.key,
        Body: object.body,
        ContentType: 'application/json',
        ChecksumSHA256: Buffer.from(object.sha256, 'hex').toString('base64'),
      }),
    );
  }

  /** Deletes the payload (an erase); S3 answers a missing key with success. */
  async remove(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: location.key }));
  }

  /** The payload's bytes; NoSuchKey and AccessDenied become a {@link ClaimCheckObjectMissingError}. */
  async get(location: Pick<ClaimCheckReference, 'bucket' | 'key'>): Promise<Uint8Array> {
    try {
      const response = await this.#client.send(
        new GetObjectCommand({ Bucket: location.bucket, Key: location.key }),
      );
      if (response.Body === undefined) throw new Error('S3 returned no body');
      return await response.Body.transformToByteArray();
    } catch (error) {
      const reason = missingReason(error);
      if (reason === undefined) throw error;
      throw new ClaimCheckObjectMissingError({ ...location, reason }, { cause: error });
    }
  }
}

function missingReason(error: unknown): MissingObjectReason | undefined {
  if (!(error instanceof S3ServiceException)) return undefined;
  if (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404) return 'NOT_FOUND';
  if (error.name === 'AccessDenied' || error.$metadata.httpStatusCode === 403) return 'ACCESS_DENIED';
  return undefined;
}
