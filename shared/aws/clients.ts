import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { safeUnmarshallOptions } from '../message/dynamo-numbers.ts';

/** Settings every AWS client takes from the edge. */
export interface AwsClientConfig {
  /**
   * An emulator endpoint (`AWS_ENDPOINT_URL`: moto, LocalStack). Given explicitly to every client so that
   * queue URLs that look like real AWS hosts never send traffic off the machine.
   */
  readonly endpoint?: string;
  readonly region?: string;
  /** Static credentials from the environment (dummy ones for an emulator; Lambda sets real ones). */
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** Reads the client settings from an environment (at the edge only). */
export function awsClientConfig(env: Readonly<Record<string, string | undefined>>): AwsClientConfig {
  return {
    ...(env.AWS_ENDPOINT_URL === undefined ? {} : { endpoint: env.AWS_ENDPOINT_URL }),
    ...(env.AWS_REGION === undefined ? {} : { region: env.AWS_REGION }),
    // The handler's own environment, not process.env: the local runtime gives each handler its own.
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  };
}

/**
 * A DynamoDB Document client that drops `undefined` attributes (so optional fields never fail a write) and
 * reads every number exactly or as an `UnreadableNumber` (so one odd item never fails a whole response).
 */
export function createDocumentClient(config: AwsClientConfig = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ ...config }), {
    marshallOptions: { removeUndefinedValues: true },
    unmarshallOptions: safeUnmarshallOptions(),
  });
}

/** An SQS client. */
export function createSqsClient(config: AwsClientConfig = {}): SQSClient {
  return new SQSClient({ ...config });
}

/**
 * An S3 client. With an emulator endpoint it addresses buckets by path (`http://host:port/bucket/key`): a
 * bucket name cannot become a subdomain of `localhost` or an IP address.
 */
export function createS3Client(config: AwsClientConfig = {}): S3Client {
  return new S3Client({ ...config, forcePathStyle: config.endpoint !== undefined });
}
