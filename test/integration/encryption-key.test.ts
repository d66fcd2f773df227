/**
 * An outbox encrypted with a customer-managed key, deployed from its template to the emulator and run end to
 * end: the key, the tables and queues that use it, and a message written, relayed, applied once and confirmed.
 * The emulator does not enforce IAM or KMS permissions; the grants are asserted on the template
 * (test/infra/constructs/outbox-encryption.test.ts). What this proves is that the keyed template deploys and
 * the outbox works on it.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { synthKeyedOutboxTemplate } from './fixtures/keyed-outbox/keyed-outbox-stack.ts';
import { runtimeBackend } from './support/backend.ts';
import { waitFor } from './support.ts';

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startLocalRuntime({
    backend: runtimeBackend(),
    port: 0,
    template: synthKeyedOutboxTemplate(),
    log: () => {},
    pollIntervalMs: 100,
  });
});

afterAll(async () => {
  await runtime?.stop();
});

/** The physical id of the one deployed resource of `type` whose logical id starts with `prefix`. */
function physicalId(prefix: string, type: string): string {
  const matches = [...runtime.resources].filter(
    ([logicalId, resource]) => logicalId.startsWith(prefix) && resource.type === type,
  );
  const [match] = matches;
  if (match === undefined || matches.length !== 1) {
    throw new Error(`expected one ${type} named ${prefix}*, found ${matches.length}`);
  }
  return match[1].physicalId;
}

describe('an outbox encrypted with a customer-managed key, on the emulator', () => {
  it('deploys its tables and queues with the key', async () => {
    const keyId = physicalId('MessagesKey', 'AWS::KMS::Key');
    const dynamo = new DynamoDBClient(runtime.clientConfig);
    const outboxTable = physicalId('OutboxTable', 'AWS::DynamoDB::Table');
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: outboxTable }));
    if (runtime.backend === 'moto') {
      // moto 5 keeps a template's SSESpecification but describes it only under the API's name (`Enabled`),
      // not CloudFormation's (`SSEEnabled`); the template itself is checked in the construct tests.
      expect(Table?.SSEDescription).toBeUndefined();
    } else {
      expect(Table?.SSEDescription?.SSEType).toBe('KMS');
      expect(Table?.SSEDescription?.KMSMasterKeyArn).toContain(keyId);
    }

    const sqs = new SQSClient(runtime.clientConfig);
    const queueUrl = runtime.env['Outbox/NoteCounter']?.SOURCE_QUEUE_URL;
    if (queueUrl === undefined) throw new Error('the consumer has no SOURCE_QUEUE_URL');
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['KmsMasterKeyId'] }),
    );
    expect(Attributes?.KmsMasterKeyId).toContain(keyId);
  });

  it('delivers a message once: written with the note, relayed, applied and confirmed', async () => {
    const invocation = await runtime.invoke('Writer', { noteId: 'note-1', text: 'kept under our key' });
    if (!invocation.ok) throw invocation.error;
    const { messageId } = invocation.result as { messageId: string };
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig));
    const notesTable = physicalId('Notes', 'AWS::DynamoDB::Table');
    const outboxTable = physicalId('OutboxTable', 'AWS::DynamoDB::Table');
    const confirmed = await waitFor(
      async () => {
        const { Item } = await documents.send(
          new GetCommand({ TableName: outboxTable, Key: { messageId }, ConsistentRead: true }),
        );
        return Item?.status === 'CONFIRMED' ? Item : undefined;
      },
      30_000,
      'the message to be CONFIRMED',
    );
    expect(confirmed.status).toBe('CONFIRMED');
    const { Item: note } = await documents.send(
      new GetCommand({ TableName: notesTable, Key: { noteId: 'note-1' }, ConsistentRead: true }),
    );
    expect(note?.applied).toBe(1);
  });
});
