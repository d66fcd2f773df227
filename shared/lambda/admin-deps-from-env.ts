import { monotonicFactory } from 'ulid';
import type { AdminDeps } from '../admin/admin-deps.ts';
import { deadLetterRoutes } from '../admin/dead-letter-routes.ts';
import { awsClientConfig, createDocumentClient, createS3Client, createSqsClient } from '../aws/clients.ts';
import { type DynamoAdminDepsOptions, dynamoAdminDeps } from '../aws/dynamo-admin-deps.ts';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.ts';
import { SqsAdminQueues } from '../aws/sqs-admin-queues.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readOptionalSetting, readSetting } from '../settings/setting.ts';

/**
 * The admin core's dependencies from an environment (see `ADMIN_SETTINGS`): the outbox and audit tables, the
 * topic routes with their dead-letter queues and delivery inboxes, the shards and the retention, over the AWS
 * clients (`AWS_ENDPOINT_URL` for an emulator). Throws a `ConfigError` naming the setting that is missing or
 * malformed, or a DEAD_LETTER_QUEUES entry no TOPIC_QUEUES route matches.
 * @example
 * const admin = new OutboxAdmin(adminDeps(process.env));
 */
export function adminDeps(env: Env): AdminDeps {
  const deps = dynamoAdminDeps(adminDepsOptions(env));
  // Fails at start, not at the first redrive, when the DLQs do not fit the routes.
  deadLetterRoutes(deps);
  return deps;
}

/**
 * What {@link adminDeps} builds the admin's dependencies from: the client and table names, the routes and the
 * rest, read from `env` (a test adds a middleware to the client before the deps are built).
 */
export function adminDepsOptions(env: Env): DynamoAdminDepsOptions {
  const config = awsClientConfig(env);
  const claimCheckBucket = readOptionalSetting(env, OutboxSettings.claimCheckBucket);
  return {
    client: createDocumentClient(config),
    queues: new SqsAdminQueues(createSqsClient(config)),
    outboxTable: readSetting(env, OutboxSettings.outboxTable),
    auditTable: readSetting(env, OutboxSettings.auditTable),
    topicQueues: readSetting(env, OutboxSettings.topicQueues),
    deadLetterQueues: readSetting(env, OutboxSettings.deadLetterQueues),
    deliveryInboxes: readSetting(env, OutboxSettings.deliveryInboxes),
    orderedTopics: readSetting(env, OutboxSettings.orderedTopics),
    subscriptions: readSetting(env, OutboxSettings.subscriptions),
    dueShards: readSetting(env, OutboxSettings.dueShards),
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
    clock: () => new Date(),
    newId: monotonicFactory(),
    sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    ...(claimCheckBucket === undefined
      ? {}
      : { claimCheck: { store: new S3ClaimCheckStore(createS3Client(config)), bucket: claimCheckBucket } }),
  };
}
