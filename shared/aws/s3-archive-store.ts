import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ArchiveObject } from '../archive/archive-objects.ts';
import type { ArchiveStore } from '../archive/archive-stream-batch.ts';
import type { AwsClientConfig } from './clients.ts';

/** Options of an {@link S3ArchiveStore}. */
export interface S3ArchiveStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
}

/** The archive in an S3 bucket: one PutObject per archive object. */
export class S3ArchiveStore implements ArchiveStore {
  readonly #options: S3ArchiveStoreOptions;

  constructor(options: S3ArchiveStoreOptions) {
    this.#options = options;
  }

  /** Puts the object (gzip JSON Lines) under its key. */
  async put(object: ArchiveObject): Promise<void> {
    await this.#options.client.send(
      new PutObjectCommand({
        Bucket: this.#options.bucket,
        Key: object.key,
        Body: object.body,
        ContentType: 'application/x-ndjson',
        ContentEncoding: 'gzip',
      }),
    );
  }
}

/**
 * An S3 client. With an emulator endpoint it addresses buckets by path (`http://host:port/bucket/key`): a
 * bucket name cannot become a subdomain of `localhost` or an IP address.
 */
export function createS3Client(config: AwsClientConfig = {}): S3Client {
  return new S3Client({ ...config, forcePathStyle: config.endpoint !== undefined });
}
