/**
 * Hand-written templates of the stacks of a producer and its subscribers, each in its own stack, as the operator
 * tools expect them to be deployed: the metadata on each resource is all discovery reads. What a subscriber's stack
 * must carry is written out here once, for the tests and for whoever builds the construct.
 */
import {
  CloudFormationClient,
  DescribeStacksCommand,
  GetTemplateCommand,
  ListStackResourcesCommand,
  ListStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { summariesOf } from './cli-fixture.ts';

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';

/** A template's resources, each with its type, metadata and properties. */
export interface Template {
  readonly Resources: Record<
    string,
    { Type: string; Metadata?: Record<string, unknown>; Properties?: unknown }
  >;
}

const role = (name: string, more: Record<string, unknown> = {}) => ({
  'serverless-outbox:role': name,
  ...more,
});

/** The URL both sides derive for `subscriber`'s queue of the outbox `outbox`, as the template builds it. */
function derivedQueueUrl(outbox: string, subscriber: string): unknown[] {
  return [
    'https://sqs.',
    { Ref: 'AWS::Region' },
    '.',
    { Ref: 'AWS::URLSuffix' },
    '/',
    { Ref: 'AWS::AccountId' },
    `/${outbox}-${subscriber}`,
  ];
}

/**
 * SUBSCRIPTIONS as a CDK app writes it: JSON built with Fn::Join around the queues' URLs, which it derives from the
 * outbox's and the subscribers' names.
 */
export function subscriptionsValue(outbox: string): unknown {
  return {
    'Fn::Join': [
      '',
      [
        '{"order.created":{"inventory":"',
        ...derivedQueueUrl(outbox, 'inventory'),
        '","loyalty":"',
        ...derivedQueueUrl(outbox, 'loyalty'),
        '"},"order.cancelled":{"inventory":"',
        ...derivedQueueUrl(outbox, 'inventory'),
        '"}}',
      ],
    ],
  };
}

/**
 * The producer's stack: its outbox table (named `orders` by `serverless-outbox:outbox`), audit table, relay and
 * sweeper (whose environment carries SUBSCRIPTIONS), receipt queue and receipts function, and one topic queue of its
 * own (`payment.captured`) with its dead-letter queue. It holds no subscriber's queue.
 */
export function producerTemplate(options: { readonly subscriptions?: unknown } = {}): Template {
  const environment = {
    Variables: {
      OUTBOX_TABLE: { Ref: 'OrdersOutboxTable' },
      DUE_SHARDS: '8',
      RETENTION_DAYS: '30',
      SUBSCRIPTIONS: options.subscriptions ?? subscriptionsValue('orders'),
    },
  };
  return {
    Resources: {
      OrdersOutboxTable: {
        Type: 'AWS::DynamoDB::Table',
        Metadata: role('outbox-table', { 'serverless-outbox:outbox': 'orders' }),
      },
      OrdersAuditTable: { Type: 'AWS::DynamoDB::Table', Metadata: role('audit-table') },
      PaymentsQueue: {
        Type: 'AWS::SQS::Queue',
        Metadata: role('topic-queue', { 'serverless-outbox:topics': ['payment.captured'] }),
      },
      PaymentsQueueDlq: {
        Type: 'AWS::SQS::Queue',
        Metadata: role('dead-letter-queue', { 'serverless-outbox:source': 'PaymentsQueue' }),
      },
      OrdersRelay: {
        Type: 'AWS::Lambda::Function',
        Metadata: role('relay'),
        Properties: { Environment: environment },
      },
      OrdersSweeper: {
        Type: 'AWS::Lambda::Function',
        Metadata: role('sweeper'),
        Properties: { Environment: environment },
      },
      OrdersReceiptQueue: { Type: 'AWS::SQS::Queue', Metadata: role('receipt-queue') },
      OrdersReceipts: { Type: 'AWS::Lambda::Function', Metadata: role('receipts') },
      OrdersAlarms: { Type: 'AWS::SNS::Topic', Metadata: role('alarm-topic') },
      OrdersTable: { Type: 'AWS::DynamoDB::Table' },
    },
  };
}

/**
 * A subscriber's own stack, as discovery expects it: its queue (role `subscriber-queue`, with the topics it receives,
 * its subscriber's name and the producer's outbox name), the queue's dead-letter queue (role
 * `subscriber-dead-letter-queue`, `serverless-outbox:source` = the queue's logical id), its inbox (role
 * `inbox-table`, with the topics and the subscriber), its consumer (role `consumer`), its alarm topic and — for a
 * redrive's journal and audit rows — an audit table (role `audit-table`).
 */
export function subscriberTemplate(
  subscriber: string,
  options: { readonly topics?: readonly string[]; readonly auditTable?: boolean } = {},
): Template {
  const topics = options.topics ?? ['order.created', 'order.cancelled'];
  const id = subscriber.charAt(0).toUpperCase() + subscriber.slice(1);
  return {
    Resources: {
      [`${id}Queue`]: {
        Type: 'AWS::SQS::Queue',
        Metadata: role('subscriber-queue', {
          'serverless-outbox:topics': topics,
          'serverless-outbox:subscriber': subscriber,
          'serverless-outbox:outbox': 'orders',
        }),
      },
      [`${id}QueueDlq`]: {
        Type: 'AWS::SQS::Queue',
        Metadata: role('subscriber-dead-letter-queue', { 'serverless-outbox:source': `${id}Queue` }),
      },
      [`${id}Inbox`]: {
        Type: 'AWS::DynamoDB::Table',
        Metadata: role('inbox-table', {
          'serverless-outbox:topics': topics,
          'serverless-outbox:subscriber': subscriber,
        }),
      },
      [`${id}Consumer`]: {
        Type: 'AWS::Lambda::Function',
        Metadata: role('consumer', { 'serverless-outbox:subscriber': subscriber }),
      },
      ...(options.auditTable === false
        ? {}
        : { [`${id}AuditTable`]: { Type: 'AWS::DynamoDB::Table', Metadata: role('audit-table') } }),
      [`${id}Alarms`]: { Type: 'AWS::SNS::Topic', Metadata: role('alarm-topic') },
      [`${id}Table`]: { Type: 'AWS::DynamoDB::Table' },
    },
  };
}

/** The ARN CloudFormation gives a stack of this account and region. */
export function stackIdOf(stackName: string): string {
  return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stackName}/0f0e0d0c`;
}

/** A CloudFormation mock that knows `stacks` (name → template), with ids and physical ids as AWS gives them. */
export function cloudFormationOf(stacks: Readonly<Record<string, Template>>) {
  const mock = mockClient(CloudFormationClient);
  const known = (name: string | undefined): Template => {
    const template = name === undefined ? undefined : stacks[name];
    if (template === undefined) {
      const error = new Error(`Stack with id ${name} does not exist`);
      error.name = 'ValidationError';
      throw error;
    }
    return template;
  };
  mock.on(DescribeStacksCommand).callsFake((input: { StackName?: string }) => {
    known(input.StackName);
    return {
      Stacks: [
        {
          StackName: input.StackName,
          StackId: stackIdOf(input.StackName ?? ''),
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(0),
        },
      ],
    };
  });
  mock.on(GetTemplateCommand).callsFake((input: { StackName?: string }) => ({
    TemplateBody: JSON.stringify(known(input.StackName)),
  }));
  mock.on(ListStackResourcesCommand).callsFake((input: { StackName?: string }) => ({
    StackResourceSummaries: summariesOf(known(input.StackName).Resources),
  }));
  mock.on(ListStacksCommand).resolves({
    StackSummaries: Object.keys(stacks).map((StackName) => ({
      StackName,
      StackStatus: 'CREATE_COMPLETE',
      CreationTime: new Date(0),
    })),
  });
  return { mock, client: new CloudFormationClient({ region: REGION }) };
}
