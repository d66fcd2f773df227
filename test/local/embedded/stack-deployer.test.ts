import {
  CloudFormationClient,
  DescribeStacksCommand,
  ListExportsCommand,
} from '@aws-sdk/client-cloudformation';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { App, type CfnElement, CfnOutput, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedStack } from '../../../infra/dev/local/backends/backend.ts';
import { emulatorClientConfig } from '../../../infra/dev/local/backends/emulator-config.ts';
import { isLocalRuntimeError } from '../../../infra/dev/local/local-runtime-error.ts';
import type { CloudFormationTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import { type EmbeddedClients, embeddedClients, rejectionOf } from './embedded-clients.ts';

const STACK = 'Shop-local';

/** Which parts the synthesized stack has, so a test can deploy a changed version of it. */
interface Variant {
  /** Adds a `bySku` index to the orders table. */
  readonly skuIndex: boolean;
  /** Keeps the archive table (retained when removed) and the FIFO queue (destroyed when removed). */
  readonly extras: boolean;
  readonly visibilitySeconds: number;
}

interface Synthesized {
  readonly template: CloudFormationTemplate;
  /** Logical ids of the stack's main resources, read from the synthesized stack (never written by hand). */
  readonly ids: {
    orders: string;
    events: string;
    deadLetters: string;
    archive: string;
    fifo: string;
    worker: string;
  };
}

/** A small shop: a streamed table with an index and TTL, a queue with a DLQ, a function with mappings, a rule. */
function synthesize(variant: Variant): Synthesized {
  const app = new App();
  const stack = new Stack(app, 'Shop', { env: { region: 'us-east-1', account: '123456789012' } });
  const orders = new dynamodb.Table(stack, 'Orders', {
    partitionKey: { name: 'orderId', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: 'expiresAt',
    removalPolicy: RemovalPolicy.DESTROY,
  });
  orders.addGlobalSecondaryIndex({
    indexName: 'byStatus',
    partitionKey: { name: 'status', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'createdAt', type: dynamodb.AttributeType.STRING },
  });
  if (variant.skuIndex) {
    orders.addGlobalSecondaryIndex({
      indexName: 'bySku',
      partitionKey: { name: 'sku', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
  }
  const deadLetters = new sqs.Queue(stack, 'EventsDlq', { retentionPeriod: Duration.days(14) });
  const orderEvents = new sqs.Queue(stack, 'Events', {
    visibilityTimeout: Duration.seconds(variant.visibilitySeconds),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: 3 },
  });
  const worker = new lambda.Function(stack, 'Worker', {
    runtime: lambda.Runtime.NODEJS_22_X,
    code: lambda.Code.fromInline('exports.handler = async () => ({});'),
    handler: 'index.handler',
    environment: { ORDERS_TABLE: orders.tableName, EVENTS_QUEUE_URL: orderEvents.queueUrl },
  });
  worker.addEventSource(
    new sources.DynamoEventSource(orders, { startingPosition: lambda.StartingPosition.TRIM_HORIZON }),
  );
  worker.addEventSource(new sources.SqsEventSource(orderEvents, { batchSize: 5 }));
  new events.Rule(stack, 'Tick', {
    schedule: events.Schedule.rate(Duration.minutes(1)),
    targets: [new targets.LambdaFunction(worker)],
  });
  const archive = new dynamodb.Table(stack, 'Archive', {
    tableName: 'shop-archive',
    partitionKey: { name: 'id', type: dynamodb.AttributeType.NUMBER },
    sortKey: { name: 'at', type: dynamodb.AttributeType.STRING },
  });
  const fifo = new sqs.Queue(stack, 'Ordered', { fifo: true, removalPolicy: RemovalPolicy.DESTROY });
  if (!variant.extras) {
    stack.node.tryRemoveChild(archive.node.id);
    stack.node.tryRemoveChild(fifo.node.id);
  }
  new CfnOutput(stack, 'ordersTableName', { value: orders.tableName });
  new CfnOutput(stack, 'ordersStreamArn', { value: orders.tableStreamArn ?? '' });
  new CfnOutput(stack, 'eventsQueueUrl', { value: orderEvents.queueUrl });
  new CfnOutput(stack, 'eventsQueueArn', { value: orderEvents.queueArn });
  new CfnOutput(stack, 'eventsQueueName', { value: orderEvents.queueName });
  new CfnOutput(stack, 'workerArn', { value: worker.functionArn });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub syntax, not a JavaScript template
  const where = Fn.sub('${AWS::Region}:${AWS::AccountId}:${AWS::StackName}');
  new CfnOutput(stack, 'summary', { value: Fn.join('|', [orders.tableName, where]) });
  const logicalId = (element: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(element.node.defaultChild as CfnElement);
  return {
    template: Template.fromStack(stack).toJSON() as CloudFormationTemplate,
    ids: {
      orders: logicalId(orders),
      events: logicalId(orderEvents),
      deadLetters: logicalId(deadLetters),
      archive: logicalId(archive),
      fifo: logicalId(fifo),
      worker: logicalId(worker),
    },
  };
}

const FIRST: Variant = { skuIndex: false, extras: true, visibilitySeconds: 45 };
const SECOND: Variant = { skuIndex: true, extras: false, visibilitySeconds: 90 };

let aws: EmbeddedClients;
let shop: Synthesized;
let deployed: DeployedStack;

beforeAll(async () => {
  aws = await embeddedClients();
  shop = synthesize(FIRST);
  deployed = await aws.backend.deploy(shop.template, STACK);
});

afterAll(async () => {
  await aws?.close();
});

function physicalId(stack: DeployedStack, logicalId: string): string {
  const resource = stack.resources.get(logicalId);
  if (resource === undefined) throw new Error(`${logicalId} is not in the stack`);
  return resource.physicalId;
}

describe('deploying a synthesized template on the embedded backend', () => {
  it('records every resource of the template, with CloudFormation-style names', () => {
    expect(deployed.change).toBe('created');
    expect([deployed.region, deployed.accountId]).toEqual(['us-east-1', '123456789012']);
    expect(deployed.stackId).toMatch(/^arn:aws:cloudformation:us-east-1:123456789012:stack\/Shop-local\//);
    expect([...deployed.resources.keys()].sort()).toEqual(Object.keys(shop.template.Resources).sort());
    for (const [logicalId, resource] of deployed.resources) {
      expect(resource.type, logicalId).toBe(shop.template.Resources[logicalId]?.Type);
      expect(resource.physicalId, logicalId).not.toBe('');
    }
    expect(physicalId(deployed, shop.ids.orders)).toMatch(
      new RegExp(`^${STACK}-${shop.ids.orders}-[A-Z0-9]{13}$`),
    );
    expect(physicalId(deployed, shop.ids.archive)).toBe('shop-archive');
    expect(physicalId(deployed, shop.ids.fifo)).toMatch(/\.fifo$/);
    expect(physicalId(deployed, shop.ids.worker)).toMatch(new RegExp(`^${STACK}-${shop.ids.worker}-`));
  });

  it('creates each table with its keys, index, stream and time to live', async () => {
    const tableName = physicalId(deployed, shop.ids.orders);
    const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    const ttl = await aws.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const archive = await aws.dynamodb.send(new DescribeTableCommand({ TableName: 'shop-archive' }));

    expect(Table?.KeySchema).toEqual([{ AttributeName: 'orderId', KeyType: 'HASH' }]);
    expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual(['byStatus']);
    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(deployed.resources.get(shop.ids.orders)?.attributes).toMatchObject({
      Arn: Table?.TableArn,
      StreamArn: Table?.LatestStreamArn,
    });
    expect(ttl.TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    expect(archive.Table?.KeySchema).toEqual([
      { AttributeName: 'id', KeyType: 'HASH' },
      { AttributeName: 'at', KeyType: 'RANGE' },
    ]);
  });

  it('creates each queue with its attributes and its redrive policy to the DLQ', async () => {
    const url = physicalId(deployed, shop.ids.events);
    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
    );
    const deadLetters = deployed.resources.get(shop.ids.deadLetters);
    const dlq = await aws.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: deadLetters?.physicalId,
        AttributeNames: ['MessageRetentionPeriod'],
      }),
    );

    expect(url).toMatch(
      new RegExp(`^${aws.backend.endpoint}/123456789012/${STACK}-${shop.ids.events}-[A-Z0-9]{13}$`),
    );
    expect(Attributes?.VisibilityTimeout).toBe('45');
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: deadLetters?.attributes?.Arn,
      maxReceiveCount: 3,
    });
    expect(dlq.Attributes?.MessageRetentionPeriod).toBe(String(14 * 24 * 3600));
  });

  it('evaluates the outputs: Ref, Fn::GetAtt, Fn::Join and Fn::Sub with pseudo parameters', async () => {
    const tableName = physicalId(deployed, shop.ids.orders);
    const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    const queueUrl = physicalId(deployed, shop.ids.events);
    const queueName = queueUrl.split('/').pop();

    expect(deployed.outputs).toEqual({
      ordersTableName: tableName,
      ordersStreamArn: Table?.LatestStreamArn,
      eventsQueueUrl: queueUrl,
      eventsQueueArn: `arn:aws:sqs:us-east-1:123456789012:${queueName}`,
      eventsQueueName: queueName,
      workerArn: `arn:aws:lambda:us-east-1:123456789012:function:${physicalId(deployed, shop.ids.worker)}`,
      summary: `${tableName}|us-east-1:123456789012:${STACK}`,
    });
  });

  it('keeps the stack when the template is unchanged, and updates it in place without losing data', async () => {
    const tableName = physicalId(deployed, shop.ids.orders);
    const queueUrl = physicalId(deployed, shop.ids.events);
    await aws.documents.send(
      new PutCommand({ TableName: tableName, Item: { orderId: 'o-1', sku: 'SKU-1' } }),
    );
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'kept' }));

    const again = await aws.backend.deploy(synthesize(FIRST).template, STACK);
    const changed = await aws.backend.deploy(synthesize(SECOND).template, STACK);
    const bySku = await aws.documents.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'bySku',
        KeyConditionExpression: 'sku = :sku',
        ExpressionAttributeValues: { ':sku': 'SKU-1' },
      }),
    );
    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }),
    );
    const { Messages } = await aws.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));

    expect(again.change).toBe('unchanged');
    expect(physicalId(again, shop.ids.orders)).toBe(tableName);
    expect(changed.change).toBe('updated');
    expect(changed.stackId).toBe(deployed.stackId);
    expect(physicalId(changed, shop.ids.orders)).toBe(tableName);
    expect(physicalId(changed, shop.ids.events)).toBe(queueUrl);
    expect(
      (await aws.documents.send(new GetCommand({ TableName: tableName, Key: { orderId: 'o-1' } }))).Item,
    ).toEqual({ orderId: 'o-1', sku: 'SKU-1' });
    expect(bySku.Items).toEqual([{ orderId: 'o-1', sku: 'SKU-1' }]);
    expect(Attributes?.VisibilityTimeout).toBe('90');
    expect(Messages?.map((message) => message.Body)).toEqual(['kept']);
  });

  it('lets a removed resource go by its DeletionPolicy: a retained table stays, a destroyed queue goes', async () => {
    const latest = await aws.backend.deploy(synthesize(SECOND).template, STACK);
    const fifoName = physicalId(deployed, shop.ids.fifo).split('/').pop();

    expect(latest.resources.has(shop.ids.archive)).toBe(false);
    expect(latest.resources.has(shop.ids.fifo)).toBe(false);
    expect(
      (await aws.dynamodb.send(new DescribeTableCommand({ TableName: 'shop-archive' }))).Table,
    ).toBeDefined();
    expect(await rejectionOf(aws.sqs.send(new GetQueueUrlCommand({ QueueName: fifoName })))).toBeInstanceOf(
      QueueDoesNotExist,
    );
  });

  it('fails with DEPLOY_FAILED naming the resource it cannot create, and creates nothing of a new stack', async () => {
    const template: CloudFormationTemplate = {
      Resources: {
        Good: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'broken-stack-good' } },
        Broken: {
          Type: 'AWS::DynamoDB::Table',
          DependsOn: 'Good',
          Properties: { AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }], KeySchema: [] },
        },
      },
    };

    const error = await rejectionOf(aws.backend.deploy(template, 'Broken-local'));

    expect(isLocalRuntimeError(error, 'DEPLOY_FAILED')).toBe(true);
    expect(error.message).toMatch(/Broken \(AWS::DynamoDB::Table\)/);
    expect(
      await rejectionOf(aws.sqs.send(new GetQueueUrlCommand({ QueueName: 'broken-stack-good' }))),
    ).toBeInstanceOf(QueueDoesNotExist);
  });
});

/** A stack that exports its dead-letter queue's ARN and its table's name, as CDK's cross-stack references do. */
const EXPORTING: CloudFormationTemplate = {
  Resources: {
    Dlq: { Type: 'AWS::SQS::Queue', Properties: {} },
    Ledger: {
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    },
  },
  Outputs: {
    ExportsOutputFnGetAttDlqArn: {
      Value: { 'Fn::GetAtt': ['Dlq', 'Arn'] },
      Export: { Name: 'Ledger:ExportsOutputFnGetAttDlqArn' },
    },
    ExportsOutputRefLedger: {
      Value: { Ref: 'Ledger' },
      Export: { Name: { 'Fn::Join': [':', [{ Ref: 'AWS::StackName' }, 'LedgerTable']] } },
    },
  },
};

/** A stack whose queue dead-letters to the exporting stack's queue, and that passes on its table's name. */
function importing(exportName: string): CloudFormationTemplate {
  return {
    Resources: {
      Work: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          RedrivePolicy: { deadLetterTargetArn: { 'Fn::ImportValue': exportName }, maxReceiveCount: 2 },
        },
      },
    },
    Outputs: { ledgerTable: { Value: { 'Fn::ImportValue': 'Ledger-local:LedgerTable' } } },
  };
}

describe('stacks of one app on the embedded backend, sharing values through exports', () => {
  it('imports what a stack deployed before exports, with Fn::ImportValue in resources and outputs', async () => {
    const ledger = await aws.backend.deploy(EXPORTING, 'Ledger-local');
    const worker = await aws.backend.deploy(importing('Ledger:ExportsOutputFnGetAttDlqArn'), 'Worker-local');
    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: physicalId(worker, 'Work'),
        AttributeNames: ['RedrivePolicy'],
      }),
    );

    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: ledger.outputs.ExportsOutputFnGetAttDlqArn,
      maxReceiveCount: 2,
    });
    expect(worker.outputs).toEqual({ ledgerTable: physicalId(ledger, 'Ledger') });
  });

  it('lists the exports and names each exported output, as CloudFormation’s API does', async () => {
    const cloudFormation = new CloudFormationClient(emulatorClientConfig(aws.backend.endpoint));
    const { Exports } = await cloudFormation.send(new ListExportsCommand({}));
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: 'Ledger-local' }));
    cloudFormation.destroy();

    expect(Exports?.map(({ Name, ExportingStackId }) => [Name, ExportingStackId])).toEqual([
      ['Ledger:ExportsOutputFnGetAttDlqArn', Stacks?.[0]?.StackId],
      ['Ledger-local:LedgerTable', Stacks?.[0]?.StackId],
    ]);
    expect(Stacks?.[0]?.Outputs?.map(({ OutputKey, ExportName }) => [OutputKey, ExportName])).toEqual([
      ['ExportsOutputFnGetAttDlqArn', 'Ledger:ExportsOutputFnGetAttDlqArn'],
      ['ExportsOutputRefLedger', 'Ledger-local:LedgerTable'],
    ]);
  });

  it('refuses to import an export no stack deployed before has, and creates nothing', async () => {
    const error = await rejectionOf(aws.backend.deploy(importing('Ledger:Missing'), 'Orphan-local'));

    expect(isLocalRuntimeError(error, 'DEPLOY_FAILED')).toBe(true);
    expect(error.message).toMatch(/Fn::ImportValue Ledger:Missing: no export named Ledger:Missing found/);
    const cloudFormation = new CloudFormationClient(emulatorClientConfig(aws.backend.endpoint));
    expect(
      await rejectionOf(cloudFormation.send(new DescribeStacksCommand({ StackName: 'Orphan-local' }))),
    ).toMatchObject({ message: /does not exist/ });
    cloudFormation.destroy();
  });

  it('refuses a second stack exporting a name another stack exports, and rolls back what it created', async () => {
    const copy: CloudFormationTemplate = {
      Resources: { Copy: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'ledger-copy' } } },
      Outputs: {
        dlq: {
          Value: { 'Fn::GetAtt': ['Copy', 'Arn'] },
          Export: { Name: 'Ledger:ExportsOutputFnGetAttDlqArn' },
        },
      },
    };

    const error = await rejectionOf(aws.backend.deploy(copy, 'Copy-local'));

    expect(isLocalRuntimeError(error, 'DEPLOY_FAILED')).toBe(true);
    expect(error.message).toBe(
      'stack Copy-local: export Ledger:ExportsOutputFnGetAttDlqArn is already exported by stack Ledger-local ' +
        '(export names are unique across the stacks of a region)',
    );
    expect(
      await rejectionOf(aws.sqs.send(new GetQueueUrlCommand({ QueueName: 'ledger-copy' }))),
    ).toBeInstanceOf(QueueDoesNotExist);
    // The exporting stack may deploy itself again: its own exports are not a clash.
    expect((await aws.backend.deploy({ ...EXPORTING, Description: 'again' }, 'Ledger-local')).change).toBe(
      'updated',
    );
  });
});
