import { monotonicFactory } from 'ulid';
import { awsClientConfig, createDocumentClient, createS3Client, createSqsClient } from '../aws/clients.ts';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.ts';
import { SqsAdminQueues } from '../aws/sqs-admin-queues.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readOptionalSetting, readSetting } from '../settings/setting.ts';
import type { AdminDeps } from './admin-deps.ts';
import { deadLetterRoutes } from './dead-letter-routes.ts';

/**
 * The admin core's dependencies from an environment (see `ADMIN_SETTINGS`): the outbox and audit tables, the
 * topic routes with their dead-letter queues and delivery inboxes, the shards and the retention, over the AWS
 * clients (`AWS_ENDPOINT_URL` for an emulator). Throws a `ConfigError` naming the setting that is missing or
 * malformed, or a DEAD_LETTER_QUEUES entry no TOPIC_QUEUES route matches.
 * @example
 * const admin = new OutboxAdmin(adminDeps(process.env));
 */
export function adminDeps(env: Env): AdminDeps {
  const config = awsClientConfig(env);
  const claimCheckBucket = readOptionalSetting(env, OutboxSettings.claimCheckBucket);
  const deps: AdminDeps = {
    client: createDocumentClient(config),
    queues: new SqsAdminQueues(createSqsClient(config)),
    outboxTable: readSetting(env, OutboxSettings.outboxTable),
    auditTable: readSetting(env, OutboxSettings.auditTable),
    topicQueues: readSetting(env, OutboxSettings.topicQueues),
    deadLetterQueues: readSetting(env, OutboxSettings.deadLetterQueues),
    deliveryInboxes: readSetting(env, OutboxSettings.deliveryInboxes),
    orderedTopics: readSetting(env, OutboxSettings.orderedTopics),
    dueShards: readSetting(env, OutboxSettings.dueShards),
    retentionDays: readSetting(env, OutboxSettings.retentionDays),
    clock: () => new Date(),
    newId: monotonicFactory(),
    sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    ...(claimCheckBucket === undefined
      ? {}
      : { claimCheck: { store: new S3ClaimCheckStore(createS3Client(config)), bucket: claimCheckBucket } }),
  };
  // Fails at start, not at the first redrive, when the DLQs do not fit the routes.
  deadLetterRoutes(deps);
  return deps;
}
