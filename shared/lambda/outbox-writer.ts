import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awsClientConfig, createDocumentClient, createS3Client } from '../aws/clients.ts';
import type { OutboxWriterOptions } from '../aws/outbox-writer.ts';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.ts';
import { subscribersByTopic } from '../outbox/subscriptions.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readOptionalSetting, readSetting } from '../settings/setting.ts';

/**
 * The options of `writeWithOutbox` from a function's environment (see `WRITER_SETTINGS`, which
 * `TransactionalOutbox.bindWriter` sets): the outbox table, its due-shard count, the stream grace period, the
 * ordered topics (ORDERED_TOPICS) with the sequence table (SEQUENCE_TABLE, when set), the subscribers of each
 * topic delivered to several (SUBSCRIPTIONS) and, when
 * CLAIM_CHECK_BUCKET is set, the claim check that puts payloads over CLAIM_CHECK_THRESHOLD_BYTES in S3.
 * @example
 * const writer = outboxWriterFromEnv(env);
 * await writeWithOutbox(writer, { actions: [putOrder], messages: [orderCreated] });
 */
export function outboxWriterFromEnv(
  env: Env,
  client: DynamoDBDocumentClient = createDocumentClient(awsClientConfig(env)),
): OutboxWriterOptions {
  const bucket = readOptionalSetting(env, OutboxSettings.claimCheckBucket);
  const ordering = readSetting(env, OutboxSettings.orderedTopics);
  const sequenceTable = readOptionalSetting(env, OutboxSettings.sequenceTable);
  const subscriptions = readSetting(env, OutboxSettings.subscriptions);
  return {
    client,
    outboxTable: readSetting(env, OutboxSettings.outboxTable),
    dueShards: readSetting(env, OutboxSettings.dueShards),
    streamGraceMs: readSetting(env, OutboxSettings.streamGraceMs),
    ...(Object.keys(ordering).length === 0 ? {} : { ordering }),
    ...(sequenceTable === undefined ? {} : { sequenceTable }),
    ...(Object.keys(subscriptions).length === 0 ? {} : { subscribers: subscribersByTopic(subscriptions) }),
    ...(bucket === undefined
      ? {}
      : {
          claimCheck: {
            store: new S3ClaimCheckStore(createS3Client(awsClientConfig(env))),
            bucket,
            thresholdBytes: readSetting(env, OutboxSettings.claimCheckThresholdBytes),
          },
        }),
  };
}
