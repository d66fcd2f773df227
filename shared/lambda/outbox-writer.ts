import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awsClientConfig, createDocumentClient } from '../aws/clients.ts';
import type { OutboxWriterOptions } from '../outbox/write-with-outbox.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readSetting } from '../settings/setting.ts';

/**
 * The options of `writeWithOutbox` from a function's environment (see `WRITER_SETTINGS`, which
 * `TransactionalOutbox.bindWriter` sets): the outbox table, its due-shard count and the stream grace period.
 * @example
 * const writer = outboxWriterFromEnv(env);
 * await writeWithOutbox(writer, { actions: [putOrder], messages: [orderCreated] });
 */
export function outboxWriterFromEnv(
  env: Env,
  client: DynamoDBDocumentClient = createDocumentClient(awsClientConfig(env)),
): OutboxWriterOptions {
  return {
    client,
    outboxTable: readSetting(env, OutboxSettings.outboxTable),
    dueShards: readSetting(env, OutboxSettings.dueShards),
    streamGraceMs: readSetting(env, OutboxSettings.streamGraceMs),
  };
}
