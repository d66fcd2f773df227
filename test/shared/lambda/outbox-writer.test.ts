import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { outboxWriterFromEnv } from '../../../shared/lambda/outbox-writer.ts';
import { DEFAULT_DUE_SHARDS, DEFAULT_STREAM_GRACE_MS } from '../../../shared/outbox/outbox-item.ts';
import { envelope, FIXED_NOW } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const env = { OUTBOX_TABLE: 'outbox-table', AWS_REGION: 'eu-west-1' };

beforeEach(() => {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
});

describe('outboxWriterFromEnv', () => {
  it('reads OUTBOX_TABLE, with the default due shards and stream grace period', () => {
    expect(outboxWriterFromEnv(env, client)).toEqual({
      client,
      outboxTable: 'outbox-table',
      dueShards: DEFAULT_DUE_SHARDS,
      streamGraceMs: DEFAULT_STREAM_GRACE_MS,
    });
  });

  it('reads DUE_SHARDS and STREAM_GRACE_MS, where 0 is a real grace period and not "absent"', () => {
    const writer = outboxWriterFromEnv({ ...env, DUE_SHARDS: '2', STREAM_GRACE_MS: '0' }, client);

    expect(writer).toMatchObject({ dueShards: 2, streamGraceMs: 0 });
  });

  it('builds its own Document client from the environment when given none', () => {
    expect(outboxWriterFromEnv(env).client).toBeInstanceOf(DynamoDBDocumentClient);
  });

  it('fails loudly with a ConfigError naming OUTBOX_TABLE when it is missing', () => {
    expect(() => outboxWriterFromEnv({}, client)).toThrow(ConfigError);
    expect(() => outboxWriterFromEnv({}, client)).toThrow('OUTBOX_TABLE is not set');
  });

  it.each([
    ['OUTBOX_TABLE', ''],
    ['OUTBOX_TABLE', 'a'],
    ['DUE_SHARDS', '0'],
    ['DUE_SHARDS', '65'],
    ['DUE_SHARDS', ' 8'],
    ['STREAM_GRACE_MS', '-1'],
    ['STREAM_GRACE_MS', '1.5'],
    ['STREAM_GRACE_MS', '43200001'],
  ])('fails loudly with a ConfigError naming %s when it is "%s"', (name, value) => {
    expect(() => outboxWriterFromEnv({ ...env, [name]: value }, client)).toThrow(ConfigError);
    expect(() => outboxWriterFromEnv({ ...env, [name]: value }, client)).toThrow(name);
  });

  it('writes the messages of writeWithOutbox to OUTBOX_TABLE with its due shards and grace period', async () => {
    const writer = outboxWriterFromEnv({ ...env, DUE_SHARDS: '1', STREAM_GRACE_MS: '0' }, client);
    const message = envelope();

    await writeWithOutbox({ ...writer, clock: () => FIXED_NOW }, { actions: [], messages: [message] });

    const put = ddb.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems?.[0]?.Put;
    expect(put).toMatchObject({
      TableName: 'outbox-table',
      Item: { messageId: message.messageId, dueShard: '0', nextAttemptAt: FIXED_NOW.toISOString() },
    });
  });
});
