import { Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { TransactionalOutbox } from 'serverless-outbox/cdk';
import { describe, expect, it } from 'vitest';
import {
  actionsOf,
  type CfnTemplate,
  environmentOf,
  functionId,
  functionIdByService,
  idsOfType,
  mappingFrom,
  references,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';
import { CONSUMER_ENTRY } from './outbox-service.ts';

/** A service whose inventory consumer confirms by receipt and whose payments consumer confirms in the outbox. */
function service(options: { readonly key?: boolean } = {}): {
  template: CfnTemplate;
  stack: Stack;
  outbox: TransactionalOutbox;
} {
  const stack = new Stack(testApp(), 'Service');
  const outbox = new TransactionalOutbox(stack, 'Outbox', {
    queues: {
      orderEvents: { topics: ['order.created', 'order.cancelled'] },
      payments: { topics: ['payment.captured'] },
    },
    ...(options.key ? { encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }) } : {}),
  });
  outbox.addConsumer('InventoryConsumer', {
    queue: 'orderEvents',
    entry: CONSUMER_ENTRY,
    confirmBy: 'receipt',
    subscriber: 'inventory',
  });
  outbox.addConsumer('PaymentConsumer', { queue: 'payments', entry: CONSUMER_ENTRY });
  return { template: templateOf(stack), stack, outbox };
}

const outboxTableId = (template: CfnTemplate) =>
  idsOfType(template, 'AWS::DynamoDB::Table').find((id) => id.startsWith('OutboxTable')) as string;

describe('a consumer that confirms by receipt', () => {
  it(
    'gets the receipt queue and its subscriber name, and no OUTBOX_TABLE',
    () => {
      const { template, stack, outbox } = service();
      const env = environmentOf(template, functionId(template, 'Outbox/InventoryConsumer'));

      expect(env).toMatchObject({ SUBSCRIBER: 'inventory' });
      expect(stack.resolve(outbox.receipts?.queue.queue.queueUrl)).toEqual(env.RECEIPT_QUEUE_URL);
      expect(env).not.toHaveProperty('OUTBOX_TABLE');
      expect(environmentOf(template, functionId(template, 'Outbox/PaymentConsumer'))).toHaveProperty(
        'OUTBOX_TABLE',
      );
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'holds SendMessage on the receipt queue and no action on the outbox table',
    () => {
      const { template, stack, outbox } = service();
      const statements = roleStatements(template, functionId(template, 'Outbox/InventoryConsumer'));
      const table = outboxTableId(template);
      const receiptQueue = stack.resolve(outbox.receipts?.queue.queue.queueArn);

      expect(statements.some((s) => resourcesOf(s).some((r) => references(r, table)))).toBe(false);
      expect(
        statements.some(
          (s) =>
            actionsOf(s).includes('sqs:SendMessage') &&
            resourcesOf(s).some((r) => JSON.stringify(r) === JSON.stringify(receiptQueue)),
        ),
      ).toBe(true);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'is not reconciled through its inbox: the sweeper resends instead',
    () => {
      const { template } = service();
      const inboxes = JSON.stringify(
        environmentOf(template, functionId(template, 'Outbox/Sweeper')).DELIVERY_INBOXES,
      );

      expect(inboxes).toContain('payment.captured');
      expect(inboxes).not.toContain('order.created');
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('the receipts function', () => {
  it(
    'reads the receipt queue and knows which subscriber confirms which topics',
    () => {
      const { template, stack, outbox } = service();
      const receipts = functionIdByService(template, 'outbox-receipts');
      const env = environmentOf(template, receipts);
      const queueId = stack.resolve(outbox.receipts?.queue.queue.queueArn)['Fn::GetAtt'][0];

      expect(JSON.parse(String(stack.resolve(env.RECEIPT_SUBSCRIBERS)))).toEqual({
        inventory: ['order.created', 'order.cancelled'],
      });
      expect(env).toHaveProperty('OUTBOX_TABLE');
      expect(mappingFrom(template, queueId)).toMatchObject({ BatchSize: 10 });
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'may only UpdateItem the confirmation attributes and the topic its condition reads',
    () => {
      const { template } = service();
      const table = outboxTableId(template);
      const onTable = roleStatements(template, functionIdByService(template, 'outbox-receipts')).filter((s) =>
        resourcesOf(s).some((r) => references(r, table)),
      );

      expect(onTable).toHaveLength(1);
      expect(actionsOf(onTable[0] as never)).toEqual(['dynamodb:UpdateItem']);
      const attributes = (onTable[0] as { Condition: Record<string, Record<string, string[]>> }).Condition[
        'ForAllValues:StringEquals'
      ]?.['dynamodb:Attributes'];
      expect(attributes).toContain('topic');
      expect(attributes).toContain('status');
      expect(attributes).not.toContain('payload');
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'is not created when no consumer confirms by receipt',
    () => {
      const stack = new Stack(testApp(), 'Plain');
      const outbox = new TransactionalOutbox(stack, 'Outbox', {
        queues: { orderEvents: { topics: ['order.created'] } },
      });
      outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
      const template = templateOf(stack);

      expect(outbox.receipts).toBeUndefined();
      expect(() => functionIdByService(template, 'outbox-receipts')).toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('confirmBy: receipt, refused at synth', () => {
  const refused = (add: (outbox: TransactionalOutbox) => void): string => {
    const stack = new Stack(testApp(), 'Refused');
    const outbox = new TransactionalOutbox(stack, 'Outbox', {
      queues: { a: { topics: ['order.created'] }, b: { topics: ['order.created.v2'] } },
    });
    add(outbox);
    try {
      templateOf(stack);
    } catch (error) {
      return String((error as Error).message);
    }
    throw new Error('synth did not refuse it');
  };

  it.each([
    [
      'without a subscriber name',
      (o: TransactionalOutbox) =>
        o.addConsumer('C', { queue: 'a', entry: CONSUMER_ENTRY, confirmBy: 'receipt' }),
      "consumer C: confirmBy 'receipt' needs a subscriber name",
    ],
    [
      'with a malformed subscriber name',
      (o: TransactionalOutbox) =>
        o.addConsumer('C', {
          queue: 'a',
          entry: CONSUMER_ENTRY,
          confirmBy: 'receipt',
          subscriber: 'Inventory',
        }),
      "consumer C: subscriber 'Inventory' must be a lowercase name",
    ],
    [
      'with reconcile: true',
      (o: TransactionalOutbox) =>
        o.addConsumer('C', {
          queue: 'a',
          entry: CONSUMER_ENTRY,
          confirmBy: 'receipt',
          subscriber: 'inventory',
          reconcile: true,
        }),
      'is not reconciled through its inbox',
    ],
    [
      'with one subscriber name twice',
      (o: TransactionalOutbox) => {
        o.addConsumer('C', {
          queue: 'a',
          entry: CONSUMER_ENTRY,
          confirmBy: 'receipt',
          subscriber: 'inventory',
        });
        o.addConsumer('D', {
          queue: 'b',
          entry: CONSUMER_ENTRY,
          confirmBy: 'receipt',
          subscriber: 'inventory',
        });
      },
      "consumer D: subscriber 'inventory' is declared by another consumer already",
    ],
    [
      'a subscriber name without confirmBy: receipt',
      (o: TransactionalOutbox) =>
        o.addConsumer('C', { queue: 'a', entry: CONSUMER_ENTRY, subscriber: 'inventory' }),
      "consumer C: subscriber is only used with confirmBy: 'receipt'",
    ],
  ])(
    '%s',
    (_, add, problem) => {
      expect(refused(add)).toContain(problem);
    },
    SYNTH_TIMEOUT_MS,
  );
});
