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
    queues: { payments: { topics: ['payment.captured'] } },
    subscribers: {
      inventory: { topics: ['order.created', 'order.cancelled'] },
      loyalty: { topics: ['order.created'] },
    },
    ...(options.key ? { encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }) } : {}),
  });
  outbox.addConsumer('InventoryConsumer', { subscriber: 'inventory', entry: CONSUMER_ENTRY });
  outbox.addConsumer('PaymentConsumer', { queue: 'payments', entry: CONSUMER_ENTRY });
  return { template: templateOf(stack), stack, outbox };
}

const outboxTableId = (template: CfnTemplate) =>
  idsOfType(template, 'AWS::DynamoDB::Table').find((id) => id.startsWith('OutboxTable')) as string;

describe('subscribers', () => {
  it(
    'each get a queue with a dead-letter queue, which the relay and the sweeper send to; SUBSCRIPTIONS names them',
    () => {
      const { template, stack, outbox } = service();
      const queues = outbox.subscriberQueues;
      expect(Object.keys(queues)).toEqual(['inventory', 'loyalty']);
      const urls = Object.fromEntries(
        Object.entries(queues).map(([name, queue]) => [name, stack.resolve(queue.queue.queueUrl)]),
      );
      for (const fn of ['Outbox/Relay', 'Outbox/Sweeper']) {
        const subscriptions = JSON.stringify(
          stack.resolve(environmentOf(template, functionId(template, fn)).SUBSCRIPTIONS),
        );
        for (const url of Object.values(urls)) expect(subscriptions).toContain(JSON.stringify(url));
        expect(subscriptions).toContain('order.cancelled');
        const statements = roleStatements(template, functionId(template, fn));
        for (const name of ['inventory', 'loyalty']) {
          const arn = JSON.stringify(stack.resolve(queues[name]?.queue.queueArn));
          expect(
            statements.some(
              (s) =>
                actionsOf(s).includes('sqs:SendMessage') &&
                resourcesOf(s).some((r) => JSON.stringify(r) === arn),
            ),
          ).toBe(true);
        }
      }
      const receipts = environmentOf(template, functionIdByService(template, 'outbox-receipts'));
      const text = JSON.stringify(stack.resolve(receipts.SUBSCRIPTIONS));
      for (const url of Object.values(urls)) expect(text).toContain(JSON.stringify(url));
    },
    SYNTH_TIMEOUT_MS,
  );
});

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

      expect(env).toHaveProperty('SUBSCRIPTIONS');
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
    'is not created when the outbox has no subscriber',
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

describe('subscribers and their consumers, refused at synth', () => {
  const refused = (add: (stack: Stack) => void): string => {
    const stack = new Stack(testApp(), 'Refused');
    add(stack);
    try {
      templateOf(stack);
    } catch (error) {
      return String((error as Error).message);
    }
    throw new Error('synth did not refuse it');
  };
  const outboxOf = (stack: Stack, subscribers: Record<string, { topics: string[] }>) =>
    new TransactionalOutbox(stack, 'Outbox', { queues: { a: { topics: ['order.shipped'] } }, subscribers });

  it.each([
    [
      'a malformed subscriber name',
      (stack: Stack) => outboxOf(stack, { Inventory: { topics: ['order.created'] } }),
      "subscriber 'Inventory' must be a lowercase name",
    ],
    [
      'a topic both on a queue and with subscribers',
      (stack: Stack) => outboxOf(stack, { inventory: { topics: ['order.shipped'] } }),
      "topic 'order.shipped' is routed to a queue and has subscribers",
    ],
    [
      'more than 10 subscribers of one topic',
      (stack: Stack) =>
        outboxOf(
          stack,
          Object.fromEntries(Array.from({ length: 11 }, (_, n) => [`s${n}`, { topics: ['order.created'] }])),
        ),
      "topic 'order.created' has 11 subscribers; at most 10",
    ],
    [
      "a subscriber's consumer with reconcile: true",
      (stack: Stack) =>
        outboxOf(stack, { inventory: { topics: ['order.created'] } }).addConsumer('C', {
          subscriber: 'inventory',
          entry: CONSUMER_ENTRY,
          reconcile: true,
        }),
      'is not reconciled through its inbox',
    ],
    [
      'two consumers of one subscriber',
      (stack: Stack) => {
        const outbox = outboxOf(stack, { inventory: { topics: ['order.created'] } });
        outbox.addConsumer('C', { subscriber: 'inventory', entry: CONSUMER_ENTRY });
        outbox.addConsumer('D', { subscriber: 'inventory', entry: CONSUMER_ENTRY });
      },
      "subscriber 'inventory''s queue has more than one consumer (D)",
    ],
  ])(
    '%s',
    (_, add, problem) => {
      expect(refused(add)).toContain(problem);
    },
    SYNTH_TIMEOUT_MS,
  );
});
