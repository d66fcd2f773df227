import {
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HandlerOverride } from '../../../infra/dev/local/host/local-function.ts';
import { type LocalRuntime, startLocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import {
  CONFIRMATION_ATTRIBUTES,
  CONFIRMATION_RETURN_VALUES,
} from '../../../shared/aws/outbox-table/transition-updates.ts';
import { MIN_CLAIM_CHECK_THRESHOLD_BYTES } from '../../../shared/claim-check/claim-check-reference.ts';
import { handler as adminHandler } from '../../../shared/lambda/entries/admin.ts';
import { attentionKeyOf } from '../../../shared/outbox/outbox-item.ts';
import { describeOnMoto, TEST_BACKEND } from '../../integration/support/backend.ts';
import {
  cancelOrder,
  deliveryOf,
  outboxItemOf,
  waitForConfirmed,
} from '../../integration/support/order-cancel.ts';
import {
  documentClient,
  placeOrder,
  request,
  scanAll,
  sqsClient,
  tableName,
  waitForMessageStatus,
} from '../../integration/support.ts';
import { lambdaContext, outboxItem, testMessageId } from '../../support/factories.ts';
import { SdkCallRecorder } from '../../support/sdk-calls.ts';
import {
  dedupe,
  describePermission,
  logPermissions,
  type Permission,
  type PermissionTarget,
  permissionsForCall,
  permissionsForEventSource,
  XRAY_PERMISSIONS,
} from '../../support/sdk-calls-iam.ts';
import { buildSingleQueueExample } from '../../support/single-queue-example.ts';
import { EXAMPLE_FUNCTIONS } from '../example-functions.ts';
import {
  type CfnTemplate,
  constructName,
  functionId,
  idsOfType,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { eventSourcesOf, grantedPermissions, logGroupOf } from './granted-permissions.ts';

/**
 * The example app run on moto by the local runtime (as deployed: S3 included) with every command its functions send recorded, through the
 * paths that matter: orders, cancellations and stock, relay and consumer with confirmation, a cancellation parked
 * ahead of its order and drained after it, a poison message dead-lettered, the sweeper's claims, sends,
 * reconciliation and ordered holds, and every admin action, the skip of an ordered gap included. The recorded calls, mapped to IAM,
 * must be exactly what each role grants (with what Lambda needs for the event sources, tracing and logs).
 */

let template: CfnTemplate;
let runtime: LocalRuntime;
const recorder = new SdkCallRecorder();
let functionNames: string[];

const past = (minutes: number): string => new Date(Date.now() - minutes * 60_000).toISOString();

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  template = templateOf(buildSingleQueueExample());
  functionNames = idsOfType(template, 'AWS::Lambda::Function')
    .map((id) => constructName(template, id))
    .filter((name): name is string => name !== undefined);
  // The sweeper works until its deadline; ten seconds are plenty for the few messages here.
  const record =
    (name: string): HandlerOverride =>
    (base) =>
    (event, context) => {
      const deadline = Date.now() + 10_000;
      const capped =
        name === 'Outbox/Sweeper'
          ? {
              ...context,
              getRemainingTimeInMillis: () =>
                Math.min(context.getRemainingTimeInMillis(), deadline - Date.now()),
            }
          : context;
      return recorder.attribute(name, () => base(event, capped));
    };
  recorder.install();
  runtime = await startLocalRuntime({
    backend: 'moto',
    port: 0,
    log: () => {},
    // The poison message is dead-lettered on purpose; its warnings would only clutter the output.
    logLevel: 'ERROR',
    pollIntervalMs: 100,
    template: withSmallClaimCheckThreshold(template),
    handlers: Object.fromEntries(functionNames.map((name) => [name, record(name)])),
  });
  await drive(runtime);
}, SYNTH_TIMEOUT_MS);

afterAll(async () => {
  recorder.uninstall();
  await runtime?.stop();
});

/**
 * The template the runtime deploys: the same resources and grants, with the claim-check threshold at its
 * minimum, so that an order of ordinary size takes the S3 path and its calls are recorded too.
 */
function withSmallClaimCheckThreshold(source: CfnTemplate): Record<string, unknown> {
  const copy = structuredClone(source) as unknown as {
    Resources: Record<string, { Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
  };
  for (const candidate of Object.values(copy.Resources)) {
    const variables = candidate.Properties?.Environment?.Variables;
    if (variables?.CLAIM_CHECK_THRESHOLD_BYTES !== undefined) {
      variables.CLAIM_CHECK_THRESHOLD_BYTES = String(MIN_CLAIM_CHECK_THRESHOLD_BYTES);
    }
  }
  return copy;
}

/** Drives every function through its paths; the runtime's own polling is not recorded. */
async function drive(app: LocalRuntime): Promise<void> {
  await request(app, 'PUT /inventory/SKU-IAM', { available: 10 });
  await request(app, 'GET /inventory/SKU-IAM');
  const { orderId, messageId } = await placeOrder(app, [{ sku: 'SKU-IAM', quantity: 1 }], 'order-iam-1');
  await waitForMessageStatus(app, orderId, 'CONFIRMED');
  // An order whose message is over the claim-check threshold: its payload goes through S3.
  const lines = Array.from({ length: 25 }, (_, line) => ({
    sku: `SKU-IAM-${'X'.repeat(50)}-${line}`,
    quantity: 1,
  }));
  // Stocked, so that the order reserves and its cancellation releases.
  await Promise.all(lines.map(({ sku }) => request(app, `PUT /inventory/${sku}`, { available: 1 })));
  const large = await placeOrder(app, lines, 'order-iam-large');
  await waitForMessageStatus(app, large.orderId, 'CONFIRMED');
  // A cancellation in order: the consumer releases the reservation (stock back, the row deleted).
  expect((await cancelOrder(app, orderId)).status).toBe(202);
  await waitForConfirmed(app, orderId, 2);
  // The large order's cancellation carries its lines, over the threshold too: its payload goes through S3.
  expect((await cancelOrder(app, large.orderId)).status).toBe(202);
  await waitForConfirmed(app, large.orderId, 2);
  await cancelOvertakingItsOrder(app);

  // A message the consumer can never process: it dead-letters it itself, with the reason.
  await sqsClient(app).send(
    new SendMessageCommand({ QueueUrl: app.outputs.orderEventsQueueUrl, MessageBody: 'not an envelope' }),
  );

  // The sweeper: a message the stream never delivered (claimed and sent), and a SENT one past its deadline
  // (reconciled against the inbox), and the FAILED gauge.
  const ddb = documentClient(app);
  const outbox = tableName(app, 'outbox');
  const [lostId, unconfirmedId, failedId] = [901, 902, 903].map(testMessageId);
  const lost = outboxItem({ messageId: lostId, aggregateId: 'iam-agg', createdAt: past(10) });
  await ddb.send(new PutCommand({ TableName: outbox, Item: { ...lost, nextAttemptAt: past(5) } }));
  const unconfirmed = outboxItem({ messageId: unconfirmedId, aggregateId: 'iam-agg', createdAt: past(20) });
  await ddb.send(
    new PutCommand({
      TableName: outbox,
      Item: { ...unconfirmed, status: 'SENT', nextAttemptAt: past(5), attempts: 1 },
    }),
  );
  const failed = outboxItem({ messageId: failedId, aggregateId: 'iam-agg', createdAt: past(30) });
  const { dueShard: _shard, nextAttemptAt: _next, ...failedItem } = failed;
  await ddb.send(
    new PutCommand({
      TableName: outbox,
      Item: {
        ...failedItem,
        status: 'FAILED',
        attempts: 10,
        attentionKey: attentionKeyOf('FAILED', failedId ?? ''),
      },
    }),
  );
  await putOrderedHeldBehindBackoff(app);
  await app.invoke('Outbox/Sweeper', {});

  // The admin API: list, show, stats, replay, cancel, bulk replay, redrive, erase, skip of an ordered gap.
  await request(app, 'GET /admin/messages?status=FAILED');
  await request(app, 'GET /admin/messages?aggregateId=iam-agg');
  await request(app, `GET /admin/messages/${messageId}`);
  await request(app, 'GET /admin/stats');
  await request(app, `POST /admin/messages/${failedId}/replay`, { reason: 'least privilege' });
  await request(app, `POST /admin/messages/${failedId}/cancel`, { reason: 'least privilege' });
  await request(app, 'POST /admin/messages/replay', { topic: 'order.created', reason: 'least privilege' });
  await request(app, 'POST /admin/dlq/redrive', { topic: 'order.created', reason: 'least privilege' });
  await request(app, 'POST /admin/dlq/redrive', { reason: 'least privilege' });
  await request(app, 'POST /admin/aggregates/iam-agg/erase', { reason: 'least privilege' });
  await skipOrderedGap(app);
  // Erasing the large order also deletes its claim-checked payload from S3.
  await request(app, `POST /admin/aggregates/${large.orderId}/erase`, { reason: 'least privilege' });
  await app.drain();
  await redriveWithMoveTask(app);
}

/**
 * A cancellation that reaches the consumer before its order: parked (the parked row put with a check of the
 * cursor), then drained once the order is applied (the parked row read and deleted with the cancellation's
 * effect).
 */
async function cancelOvertakingItsOrder(app: LocalRuntime): Promise<void> {
  await app.pausePollers();
  try {
    const placed = await placeOrder(app, [{ sku: 'SKU-IAM', quantity: 1 }], 'order-iam-parked');
    const cancelled = await cancelOrder(app, placed.orderId);
    expect(cancelled.status).toBe(202);
    const cancellation = await outboxItemOf(app, cancelled.body.messageId);
    const early = await app.invoke('Outbox/InventoryConsumer', deliveryOf(cancellation));
    expect(early).toMatchObject({ ok: true, result: { batchItemFailures: [] } });
    const parked = (await scanAll(app, 'inbox')).map((row) => row.messageId);
    expect(parked).toContain(`parked#order#${placed.orderId}#2`);
    app.resumePollers();
    await waitForConfirmed(app, placed.orderId, 2);
    const drained = (await scanAll(app, 'inbox')).map((row) => row.messageId);
    expect(drained).not.toContain(`parked#order#${placed.orderId}#2`);
  } finally {
    app.resumePollers();
  }
}

/**
 * An ordered sequence whose seq 2 is due while seq 1 is in backoff: the sweeper claims seq 2, looks its
 * predecessor up (the byOrderKey index, then the item) and holds it. Both are written as the stream relay never
 * forwards them (not PENDING when inserted), so the sweeper alone handles them.
 */
async function putOrderedHeldBehindBackoff(app: LocalRuntime): Promise<void> {
  const ddb = documentClient(app);
  const outbox = tableName(app, 'outbox');
  const sequence = [
    { seq: 1, messageId: testMessageId(905), nextAttemptAt: past(-5) },
    { seq: 2, messageId: testMessageId(906), nextAttemptAt: past(5) },
  ];
  for (const { seq, messageId, nextAttemptAt } of sequence) {
    const item = outboxItem({ messageId, aggregateId: 'iam-seq', orderKey: 'order#iam-seq', seq });
    await ddb.send(new PutCommand({ TableName: outbox, Item: { ...item, status: 'SENT', nextAttemptAt } }));
    await ddb.send(
      new UpdateCommand({
        TableName: outbox,
        Key: { messageId },
        UpdateExpression: 'SET #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'PENDING' },
      }),
    );
  }
}

/**
 * An ordered message FAILED for good at seq 1: the operator skips it (the byOrderKey index, the consumer's
 * cursor read and moved, the message cancelled).
 */
async function skipOrderedGap(app: LocalRuntime): Promise<void> {
  const gapId = testMessageId(904);
  const gap = outboxItem({ messageId: gapId, aggregateId: 'iam-gap', orderKey: 'order#iam-gap', seq: 1 });
  const { dueShard: _shard, nextAttemptAt: _next, ...gapItem } = gap;
  await documentClient(app).send(
    new PutCommand({
      TableName: tableName(app, 'outbox'),
      Item: { ...gapItem, status: 'FAILED', attempts: 10, attentionKey: attentionKeyOf('FAILED', gapId) },
    }),
  );
  const skipped = await request(app, 'POST /admin/ordering/skip', {
    orderKey: 'order#iam-gap',
    seq: 1,
    reason: 'least privilege',
  });
  expect(skipped.status).toBe(200);
}

/**
 * On AWS a filter-less redrive leaves the moving to SQS's move task, which emulators lack: the admin handler
 * is run as on AWS (no endpoint) with SQS and DynamoDB answered by mocks, and its commands recorded.
 */
async function redriveWithMoveTask(app: LocalRuntime): Promise<void> {
  const sqs = mockClient(SQSClient);
  const ddb = mockClient(DynamoDBDocumentClient);
  try {
    sqs.on(GetQueueAttributesCommand).callsFake(async (input: { QueueUrl: string }) => ({
      Attributes: { QueueArn: queueArnOf(app, input.QueueUrl) },
    }));
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });
    const { AWS_ENDPOINT_URL: _endpoint, ...onAws } = app.env['Outbox/Admin'] ?? {};
    const admin = adminHandler.withEnv(onAws);
    const result = await admin(adminEvent('dlq/redrive', { reason: 'least privilege' }), lambdaContext());
    expect(result.statusCode).toBe(202);
    recorder.recordMocks('Outbox/Admin', [sqs, ddb]);
  } finally {
    sqs.restore();
    ddb.restore();
  }
}

function queueArnOf(app: LocalRuntime, url: string): string {
  const deployed = [...app.resources.values()].find((candidate) => candidate.physicalId === url);
  return `arn:aws:sqs:us-east-1:123456789012:${deployed?.logicalId ?? 'unknown'}`;
}

function adminEvent(proxy: string, body: unknown): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    path: `/admin/${proxy}`,
    resource: '/admin/{proxy+}',
    pathParameters: { proxy },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    body: JSON.stringify(body),
    isBase64Encoded: false,
    stageVariables: null,
    requestContext: {
      requestId: 'request-iam',
      identity: { userArn: 'arn:aws:iam::123456789012:user/operator', caller: null, user: null },
    },
  } as unknown as APIGatewayProxyEvent;
}

/** Where a name the code used (a table's name, a queue's URL) came from: the resource's logical id. */
function logicalTarget(target: PermissionTarget): PermissionTarget {
  if (target.kind === 'any') return target;
  const arn = /^arn:aws:sqs:[^:]+:[^:]+:(.+)$/.exec(target.name);
  if (arn?.[1] !== undefined && runtime.resources.has(arn[1])) return { ...target, name: arn[1] };
  const found = [...runtime.resources.values()].find(
    (deployed) =>
      deployed.physicalId === target.name || Object.values(deployed.attributes ?? {}).includes(target.name),
  );
  return { ...target, name: found?.logicalId ?? `(unknown ${target.name})` };
}

/**
 * What the recorded calls of `name` need, resources by logical id; an object key is counted under the granted
 * prefix that holds it (a grant names a prefix, a call names one object).
 */
function recordedNeeds(name: string, id: string): string[] {
  const prefixes = grantedPermissions(template, id).flatMap(({ target }) =>
    target.kind === 'objects' ? [target] : [],
  );
  const underGrant = (target: PermissionTarget): PermissionTarget => {
    if (target.kind !== 'objects') return target;
    const holder = prefixes.find(
      (granted) => granted.name === target.name && target.prefix.startsWith(granted.prefix),
    );
    return holder ?? target;
  };
  return dedupe(
    recorder
      .calls(name)
      .flatMap(permissionsForCall)
      .map(
        (permission): Permission => ({
          ...permission,
          target: underGrant(logicalTarget(permission.target)),
        }),
      ),
  ).map(describePermission);
}

/** What Lambda needs for the function beyond its code: event sources, tracing, its logs. */
function platformNeeds(id: string): string[] {
  return dedupe([
    ...eventSourcesOf(template, id).flatMap(permissionsForEventSource),
    ...XRAY_PERMISSIONS,
    ...logPermissions(logGroupOf(template, id)),
  ]).map(describePermission);
}

describeOnMoto('the functions put claim-checked payloads in S3, which the embedded backend does not serve')(
  'least privilege, proven from the recorded SDK calls',
  () => {
    it('recorded calls from every function of the stack', () => {
      expect(functionNames.length).toBeGreaterThan(0);
      expect(recorder.functions()).toEqual([...functionNames].sort());
    });

    it.each(EXAMPLE_FUNCTIONS)(
      '%s is granted every action its recorded calls need (a missing grant is an outage)',
      (name) => {
        const id = functionId(template, name);
        const granted = new Set(grantedPermissions(template, id).map(describePermission));
        const missing = [...recordedNeeds(name, id), ...platformNeeds(id)].filter(
          (need) => !granted.has(need),
        );
        expect(missing).toEqual([]);
      },
    );

    it.each(EXAMPLE_FUNCTIONS)(
      '%s is granted nothing that no recorded call, event source, trace or log needs',
      (name) => {
        const id = functionId(template, name);
        const needed = new Set([...recordedNeeds(name, id), ...platformNeeds(id)]);
        const unneeded = [...new Set(grantedPermissions(template, id).map(describePermission))].filter(
          (grant) => !needed.has(grant),
        );
        expect(unneeded).toEqual([]);
      },
    );

    it('confirms in the producer’s outbox with only the attributes and return values its grant allows', () => {
      const outbox = runtime.outputs.outboxTableName;
      const confirmations = recorder
        .calls('Outbox/InventoryConsumer')
        .filter((call) => call.command === 'UpdateItem' && call.table === outbox);
      expect(confirmations.length).toBeGreaterThan(0);
      for (const call of confirmations) {
        expect(CONFIRMATION_ATTRIBUTES).toEqual(expect.arrayContaining([...(call.attributes ?? [])]));
        expect(call.returnValues).toBe(CONFIRMATION_RETURN_VALUES);
      }
    });
  },
);
