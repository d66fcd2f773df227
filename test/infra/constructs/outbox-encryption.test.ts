import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as kms from 'aws-cdk-lib/aws-kms';
import { KEY_ACTIONS } from 'serverless-outbox/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  idsOfType,
  propertiesOf,
  resolvedTarget,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import {
  actionsOnArn,
  CONSUMER_ENTRY,
  type OutboxService,
  outboxService,
  serviceFunction,
} from './outbox-service.ts';

/** An outbox with every part that holds messages (a consumer, the archive, the admin API), built with `key`. */
function serviceWith(options: { readonly withKey: boolean }) {
  let key: kms.Key | undefined;
  const service = outboxService({ archive: true }, (stack) => {
    if (!options.withKey) return {};
    key = new kms.Key(stack, 'MessagesKey', { enableKeyRotation: true });
    return { encryptionKey: key };
  });
  const consumer = service.outbox.addConsumer('InventoryConsumer', {
    queue: 'orderEvents',
    entry: CONSUMER_ENTRY,
  });
  const writer = serviceFunction(service.stack, 'Writer');
  service.outbox.bindWriter(writer);
  const reader = serviceFunction(service.stack, 'Reader');
  service.outbox.bindReader(reader);
  const admin = service.outbox.addAdminApi(new apigateway.RestApi(service.stack, 'Api'));
  return { ...service, key, consumer, writer, reader, admin, json: templateOf(service.stack) };
}

type Encrypted = ReturnType<typeof serviceWith>;
let keyed: Encrypted;
let plain: Encrypted;

beforeAll(() => {
  keyed = serviceWith({ withKey: true });
  plain = serviceWith({ withKey: false });
}, SYNTH_TIMEOUT_MS * 2);

const logicalId = (service: OutboxService, token: string) => resolvedTarget(service.stack, token);
const keyArn = (service: Encrypted) => {
  if (service.key === undefined) throw new Error('the service has no key');
  return service.stack.resolve(service.key.keyArn);
};

/** Every DynamoDB table and SQS queue of a template with its encryption settings. */
function encryptionOf(json: CfnTemplate) {
  return {
    tables: idsOfType(json, 'AWS::DynamoDB::Table').map((id) => propertiesOf(json, id).SSESpecification),
    queues: idsOfType(json, 'AWS::SQS::Queue').map((id) => {
      const { KmsMasterKeyId, SqsManagedSseEnabled } = propertiesOf(json, id);
      return { KmsMasterKeyId, SqsManagedSseEnabled };
    }),
  };
}

describe('TransactionalOutbox with a customer-managed key', () => {
  it('encrypts the outbox, inbox and audit tables with the key', () => {
    const { tables } = encryptionOf(keyed.json);
    expect(tables).toHaveLength(3);
    for (const sse of tables) {
      expect(sse).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn(keyed) });
    }
  });

  it('encrypts every topic queue, dead-letter queue and the failure queue with the key', () => {
    const { queues } = encryptionOf(keyed.json);
    // orderEvents, its dead-letter queue, and the relay's failure queue.
    expect(queues).toHaveLength(3);
    for (const queue of queues) {
      expect(queue).toEqual({ KmsMasterKeyId: keyArn(keyed), SqsManagedSseEnabled: undefined });
    }
  });

  it('encrypts a new archive bucket with the key, with a bucket key', () => {
    const bucket = propertiesOf(keyed.json, logicalId(keyed, keyed.outbox.archiveBucket?.bucketName ?? ''));
    expect(bucket.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn(keyed) },
        },
      ],
    });
  });

  it.each([
    { name: 'the relay (stream, updates, sends)', pick: (s: Encrypted) => s.outbox.relay, use: 'write' },
    { name: 'the sweeper', pick: (s: Encrypted) => s.outbox.sweeper, use: 'write' },
    {
      name: 'a consumer (receive, inbox, confirm)',
      pick: (s: Encrypted) => s.consumer.function,
      use: 'write',
    },
    { name: 'a writer', pick: (s: Encrypted) => s.writer, use: 'write' },
    { name: 'the admin API', pick: (s: Encrypted) => s.admin.function, use: 'write' },
    { name: 'a reader (index pages only)', pick: (s: Encrypted) => s.reader, use: 'read' },
  ] as const)('grants $name exactly the key actions its use needs ($use)', ({ pick, use }) => {
    const fn = pick(keyed);
    if (fn === undefined) throw new Error('missing function');
    const statements = roleStatements(keyed.json, logicalId(keyed, fn.functionName));
    expect(actionsOnArn(statements, keyArn(keyed))).toEqual([...KEY_ACTIONS[use]].sort());
  });

  it('grants the archiver decryption for the stream and only data keys for the objects it writes', () => {
    const archiver = keyed.outbox.archiver;
    if (archiver === undefined) throw new Error('missing archiver');
    const statements = roleStatements(keyed.json, logicalId(keyed, archiver.functionName));
    expect(actionsOnArn(statements, keyArn(keyed))).toEqual([
      'kms:Decrypt',
      'kms:DescribeKey',
      'kms:GenerateDataKey',
    ]);
  });

  it('grants a reader no right to encrypt: it cannot write what the key protects', () => {
    expect(KEY_ACTIONS.read).not.toContain('kms:GenerateDataKey*');
    expect(KEY_ACTIONS.read).not.toContain('kms:Encrypt');
  });
});

describe('TransactionalOutbox without a key', () => {
  it('leaves tables on AWS-owned keys and queues on SQS-managed encryption, and grants no key use', () => {
    const { tables, queues } = encryptionOf(plain.json);
    expect(tables).toEqual([undefined, undefined, undefined]);
    for (const queue of queues)
      expect(queue).toEqual({ KmsMasterKeyId: undefined, SqsManagedSseEnabled: true });
    const kmsActions = idsOfType(plain.json, 'AWS::IAM::Policy').flatMap(
      (id) => JSON.stringify(propertiesOf(plain.json, id)).match(/kms:[A-Za-z*]+/g) ?? [],
    );
    // Only the alarm topic's own key (used by CloudWatch, not by any function) exists.
    expect(kmsActions).toEqual([]);
  });
});
