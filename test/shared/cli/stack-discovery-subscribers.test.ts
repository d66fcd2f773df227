/**
 * Discovery of a producer's stack with subscribers and of a subscriber's own stack, from hand-written templates
 * (`stack-templates.ts`), and the choice among several local stacks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  discoverOutbox,
  discoverStack,
  outboxOfStack,
  StackDiscoveryError,
  stackKindOf,
  stackOfTemplate,
  subscriberOfStack,
} from '../../../shared/cli/stack-discovery.ts';
import { chooseStackName } from '../../../shared/cli/stack-name.ts';
import { summariesOf } from './cli-fixture.ts';
import {
  cloudFormationOf,
  producerTemplate,
  stackIdOf,
  subscriberTemplate,
  type Template,
} from './stack-templates.ts';

const SQS = 'https://sqs.us-east-1.amazonaws.com/123456789012';

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

const snapshot = (stackName: string, template: Template) => ({
  stackName,
  template,
  summaries: summariesOf(template.Resources),
  stackId: stackIdOf(stackName),
});

/** The physical id the fixture gives a resource (what ListStackResources returns for it). */
const physical = (template: Template, logicalId: string) =>
  summariesOf(template.Resources).find((s) => s.LogicalResourceId === logicalId)?.PhysicalResourceId;

describe('a producer stack with subscribers', () => {
  it('reads SUBSCRIPTIONS from the relay’s environment, its queue URLs built from the pseudo parameters', () => {
    const outbox = outboxOfStack(snapshot('OutboxOrders', producerTemplate()));

    expect(outbox.subscriptions).toEqual({
      'order.created': { inventory: `${SQS}/orders-inventory`, loyalty: `${SQS}/orders-loyalty` },
      'order.cancelled': { inventory: `${SQS}/orders-inventory` },
    });
    expect(outbox.outboxName).toBe('orders');
    // Its own topic queue only: the subscribers' queues are in their stacks.
    expect(Object.keys(outbox.topicQueues)).toEqual(['payment.captured']);
    expect(outbox.notes).toEqual([]);
  });

  it('resolves a queue of the same stack named by Ref, as the construct writes it while it holds the queues', () => {
    const template = producerTemplate({
      subscriptions: { 'Fn::Join': ['', ['{"order.created":{"loyalty":"', { Ref: 'PaymentsQueue' }, '"}}']] },
    });
    const outbox = outboxOfStack(snapshot('OutboxOrders', template));
    expect(outbox.subscriptions).toEqual({
      'order.created': { loyalty: physical(template, 'PaymentsQueue') },
    });
  });

  it('keeps the subscriber names when a part of a URL cannot be resolved', () => {
    const template = producerTemplate({
      subscriptions: {
        'Fn::Join': ['', ['{"order.created":{"loyalty":"', { 'Fn::ImportValue': 'LoyaltyQueueUrl' }, '"}}']],
      },
    });
    const outbox = outboxOfStack(snapshot('OutboxOrders', template));
    expect(Object.keys(outbox.subscriptions['order.created'] ?? {})).toEqual(['loyalty']);
  });

  it('says so when SUBSCRIPTIONS is not the JSON it should be, and goes on without subscribers', () => {
    const outbox = outboxOfStack(
      snapshot('OutboxOrders', producerTemplate({ subscriptions: '["inventory"]' })),
    );
    expect(outbox.subscriptions).toEqual({});
    expect(outbox.notes).toEqual([
      expect.stringContaining('SUBSCRIPTIONS in the deployed template cannot be read'),
    ]);
  });

  it('has no subscriptions when the template writes none (no topic has subscribers)', () => {
    const template = producerTemplate();
    for (const id of ['OrdersRelay', 'OrdersSweeper']) {
      const properties = template.Resources[id]?.Properties as {
        Environment: { Variables: Record<string, unknown> };
      };
      delete properties.Environment.Variables.SUBSCRIPTIONS;
    }
    expect(outboxOfStack(snapshot('OutboxOrders', template)).subscriptions).toEqual({});
  });
});

describe('a subscriber’s own stack', () => {
  it('finds its queue, dead-letter queue, inbox and audit table by role, with their topics', () => {
    const template = subscriberTemplate('inventory');
    const stack = stackOfTemplate(snapshot('OutboxInventory', template));

    expect(stack.kind).toBe('subscriber');
    const found = subscriberOfStack(snapshot('OutboxInventory', template));
    const both = (id: string) => ({
      'order.created': physical(template, id),
      'order.cancelled': physical(template, id),
    });
    expect(found).toMatchObject({
      stackName: 'OutboxInventory',
      subscriber: 'inventory',
      outboxes: ['orders'],
      topicQueues: both('InventoryQueue'),
      deadLetterQueues: both('InventoryQueueDlq'),
      inboxTables: both('InventoryInbox'),
      auditTable: physical(template, 'InventoryAuditTable'),
      notes: [],
    });
  });

  it('is found without an audit table, which only a redrive that moves messages needs', () => {
    const found = subscriberOfStack(
      snapshot('OutboxLoyalty', subscriberTemplate('loyalty', { auditTable: false })),
    );
    expect(found.subscriber).toBe('loyalty');
    expect(found.auditTable).toBeUndefined();
  });

  it('refuses queues of two subscribers, and a dead-letter queue of no queue of the stack', () => {
    const two = subscriberTemplate('inventory');
    const loyalty = subscriberTemplate('loyalty');
    Object.assign(two.Resources, { LoyaltyQueue: loyalty.Resources.LoyaltyQueue });
    expect(() => subscriberOfStack(snapshot('Mixed', two))).toThrow(
      'stack Mixed: holds the queues of several subscribers (inventory, loyalty)',
    );

    const stray = subscriberTemplate('inventory');
    const dlq = stray.Resources.InventoryQueueDlq;
    if (dlq?.Metadata !== undefined) dlq.Metadata['serverless-outbox:source'] = 'ElsewhereQueue';
    expect(() => subscriberOfStack(snapshot('Stray', stray))).toThrow(StackDiscoveryError);
  });

  it('tells a producer, a subscriber and any other stack apart from the template alone', () => {
    expect(stackKindOf(producerTemplate())).toEqual({ kind: 'outbox', outboxName: 'orders' });
    expect(stackKindOf(subscriberTemplate('loyalty'))).toEqual({
      kind: 'subscriber',
      subscriber: 'loyalty',
      outboxes: ['orders'],
    });
    expect(stackKindOf({ Resources: { Bucket: { Type: 'AWS::S3::Bucket' } } })).toEqual({ kind: 'other' });
  });

  it('is no outbox: discoverOutbox refuses it, naming the subscriber', async () => {
    const { mock, client } = cloudFormationOf({ 'OutboxInventory-local': subscriberTemplate('inventory') });
    restore = () => mock.restore();
    expect((await discoverStack(client, 'OutboxInventory-local')).kind).toBe('subscriber');
    await expect(discoverOutbox(client, 'OutboxInventory-local')).rejects.toThrow(
      "stack OutboxInventory-local: is subscriber inventory's own stack: it holds no outbox",
    );
  });
});

describe('chooseStackName among several local stacks', () => {
  const endpoint = 'http://127.0.0.1:5000';
  const labelOf = (stacks: Record<string, Template>) => async (name: string) => {
    const kind = stackKindOf(stacks[name] ?? { Resources: {} });
    return kind.kind === 'outbox'
      ? { holdsOutbox: true, label: 'outbox' }
      : {
          holdsOutbox: false,
          label: kind.kind === 'subscriber' ? `subscriber ${kind.subscriber}` : 'no outbox',
        };
  };

  it('takes the one holding an outbox: the producer, not its subscribers', async () => {
    const stacks = {
      'OutboxInventory-local': subscriberTemplate('inventory'),
      'OutboxOrders-local': producerTemplate(),
      'OutboxLoyalty-local': subscriberTemplate('loyalty'),
    };
    const { mock, client } = cloudFormationOf(stacks);
    restore = () => mock.restore();
    expect(await chooseStackName(client, { endpoint, labelOf: labelOf(stacks) })).toBe('OutboxOrders-local');
  });

  it('names every local stack and what it holds when none or several hold an outbox', async () => {
    const stacks = {
      'OutboxInventory-local': subscriberTemplate('inventory'),
      'OutboxLoyalty-local': subscriberTemplate('loyalty'),
    };
    const { mock, client } = cloudFormationOf(stacks);
    restore = () => mock.restore();
    await expect(chooseStackName(client, { endpoint, labelOf: labelOf(stacks) })).rejects.toThrow(
      `none of the local stacks on the emulator at ${endpoint} holds an outbox: OutboxInventory-local (subscriber inventory), OutboxLoyalty-local (subscriber loyalty); choose one with --stack`,
    );
  });
});
