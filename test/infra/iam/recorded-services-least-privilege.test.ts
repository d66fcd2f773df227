import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedStack } from '../../../infra/dev/local/backends/backend.ts';
import { stackContext } from '../../../infra/dev/local/backends/stack-context.ts';
import { asTemplate as asLocalTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import { queueNameOf, resolveValue } from '../../../infra/dev/local/template/intrinsics.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import {
  cancelOrder,
  clearFaults,
  deliveryKey,
  exampleFunctionNames,
  exampleTemplates,
  FUNCTIONS,
  LOCAL_STACKS,
  outbox,
  outboxRowsOf,
  placeOrder,
  pointsOf,
  putStock,
  receivedOf,
  type Services,
  startServices,
  stockOf,
  waitForConfirmed,
  waitForDelivery,
} from '../../integration/services/support.ts';
import { request, sqsClient, waitFor } from '../../integration/support.ts';
import { type SdkCall, SdkCallRecorder } from '../../support/sdk-calls.ts';
import { type PermissionTarget, permissionsForCall } from '../../support/sdk-calls-iam.ts';
import {
  asTemplate,
  type CfnTemplate,
  constructName,
  functionId,
  type PolicyStatement,
  roleStatements,
} from '../template-queries.ts';
import { type AccessRequest, isAllowed, type ResolvedStatement } from './policy-evaluation.ts';

/**
 * The example as three services — orders (the producer), inventory and loyalty (its subscribers), each a
 * stack of its own — run on the test backend with every SDK call each function sends recorded, through the
 * paths of the end-to-end suites (test/integration/services): orders placed, cancelled, out of stock and
 * delivered twice; a subscriber's receipts lost and its delivery resent by the sweeper; a subscriber down and
 * catching up; a delivery FAILED, listed, shown and replayed through the admin API; a dead letter and its
 * redrive; an erase; the deployed sweeper's own run. Each call is mapped to its IAM action and its resource's
 * ARN and proven two ways: the policy synthesized for the function's role in its own stack allows it
 * (evaluated as IAM does: wildcards, Deny first, the receipts function's condition keys), and the services
 * touch each other only through messages — no function reads or writes a table of another stack; the only
 * resources any function uses across stacks are the subscribers' queues (sent to by the producer's relay and
 * sweeper) and the producer's receipt queue (sent to by the subscribers' consumers). The proof is run once on
 * a call no function may make, so that it can fail.
 */

let services: Services;
const recorder = new SdkCallRecorder();

/** Each running stack: its name, its template, the ARN of each of its resources and its policies resolved. */
interface StackFacts {
  readonly name: string;
  readonly template: CfnTemplate;
  /** ARN → what it is: a table (its indexes and stream are under its ARN), a queue, a bucket. */
  readonly owned: ReadonlyMap<
    string,
    { readonly kind: 'table' | 'queue' | 'bucket'; readonly logicalId: string }
  >;
  /** The statements of a function's role, by its construct path, with their resources as ARNs. */
  statementsOf(path: string): ResolvedStatement[];
}

let stacks: StackFacts[];
let arns: { readonly region: string; readonly account: string };

beforeAll(async () => {
  recorder.install();
  services = await startServices({ runAs: (name, work) => recorder.attribute(name, work) });
  const [region = '', account = ''] = (services.runtime.functions[FUNCTIONS.relay]?.arn ?? '')
    .split(':')
    .slice(3, 5);
  arns = { region, account };
  stacks = await Promise.all(services.runtime.stacks.map((stack) => factsOf(stack)));
  await drive(services);
}, 300_000);

afterAll(async () => {
  recorder.uninstall();
  await services?.stop();
});

/** What a stack deploys and grants, its references resolved against what the backend created. */
async function factsOf(stack: Services['runtime']['stacks'][number]): Promise<StackFacts> {
  const source = exampleTemplates().find((candidate) => candidate.stackName === stack.name);
  if (source === undefined) throw new Error(`no template for ${stack.name}`);
  const template = asTemplate(source.template);
  const deployed: DeployedStack = {
    stackName: stack.deployedName,
    region: arns.region,
    accountId: arns.account,
    resources: stack.resources,
    outputs: stack.outputs,
  };
  const dynamodb = new DynamoDBClient(services.runtime.clientConfig);
  const described = await stackContext(deployed, {
    template: asLocalTemplate(source.template),
    clients: { dynamodb },
  });
  dynamodb.destroy();
  // The ARNs CloudFormation gives, where the backend does not tell them (moto: log groups, buckets).
  const context = {
    ...described,
    resources: new Map(
      [...described.resources].map(([logicalId, resource]) => {
        const arn = derivedArn(resource.type, resource.physicalId);
        return [
          logicalId,
          resource.attributes?.Arn !== undefined || arn === undefined
            ? resource
            : { ...resource, attributes: { ...resource.attributes, Arn: arn } },
        ];
      }),
    ),
  };
  const owned = new Map<string, { kind: 'table' | 'queue' | 'bucket'; logicalId: string }>();
  for (const resource of stack.resources.values()) {
    if (resource.type === 'AWS::DynamoDB::Table') {
      owned.set(tableArn(resource.physicalId), { kind: 'table', logicalId: resource.logicalId });
    } else if (resource.type === 'AWS::SQS::Queue') {
      owned.set(queueArn(resource.physicalId), { kind: 'queue', logicalId: resource.logicalId });
    } else if (resource.type === 'AWS::S3::Bucket') {
      owned.set(`arn:aws:s3:::${resource.physicalId}`, { kind: 'bucket', logicalId: resource.logicalId });
    }
  }
  return {
    name: stack.name,
    template,
    owned,
    statementsOf: (path) =>
      roleStatements(template, functionId(template, path)).map((statement) => resolved(statement, context)),
  };
}

function resolved(
  statement: PolicyStatement,
  context: Parameters<typeof resolveValue>[1],
): ResolvedStatement {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
  return {
    effect: statement.Effect === 'Deny' ? 'Deny' : 'Allow',
    actions: list(statement.Action).map(String),
    resources: list(statement.Resource).map((value) =>
      String(resolveValue(value, context, 'policy resource')),
    ),
    ...(statement.Condition === undefined
      ? {}
      : { condition: statement.Condition as ResolvedStatement['condition'] }),
  };
}

/** The ARN of a log group or a bucket, from its name, as CloudFormation's `Fn::GetAtt <id>.Arn` gives it. */
function derivedArn(type: string, physicalId: string): string | undefined {
  if (type === 'AWS::Logs::LogGroup')
    return `arn:aws:logs:${arns.region}:${arns.account}:log-group:${physicalId}:*`;
  if (type === 'AWS::S3::Bucket') return `arn:aws:s3:::${physicalId}`;
  return undefined;
}

const tableArn = (name: string): string => `arn:aws:dynamodb:${arns.region}:${arns.account}:table/${name}`;
const queueArn = (urlOrArn: string): string =>
  urlOrArn.startsWith('arn:')
    ? urlOrArn
    : `arn:aws:sqs:${arns.region}:${arns.account}:${queueNameOf(urlOrArn)}`;

/** The ARN a call's permission applies to (an object's own key, which a grant's prefix must cover). */
function arnOf(target: PermissionTarget, call: SdkCall): string {
  switch (target.kind) {
    case 'table':
      return tableArn(target.name);
    case 'index':
      return `${tableArn(target.name)}/index/${target.index}`;
    case 'stream':
      return target.name;
    case 'queue':
      return queueArn(target.name);
    case 'objects':
      return `arn:aws:s3:::${target.name}/${call.key ?? target.prefix}`;
    case 'any':
      return '*';
    default:
      throw new Error(`no ARN for a call on a ${target.kind}`);
  }
}

/** What IAM is asked for by one recorded call (a transaction: one request per item, with its own attributes). */
function requestsOf(call: SdkCall): AccessRequest[] {
  return permissionsForCall(call).map((permission, index) => {
    const item = call.command === 'TransactWriteItems' ? call.transactItems?.[index] : undefined;
    const attributes = item === undefined ? call.attributes : item.attributes;
    return {
      action: permission.action,
      resource: arnOf(permission.target, call),
      ...(attributes === undefined ? {} : { attributes }),
      ...(call.returnValues === undefined ? {} : { returnValues: call.returnValues }),
    };
  });
}

/** The stack that owns a resource, and what the resource is there; undefined for one no stack owns. */
function ownerOf(resource: string): { stack: StackFacts; kind: string; logicalId: string } | undefined {
  for (const stack of stacks) {
    for (const [arn, what] of stack.owned) {
      const under = what.kind === 'table' || what.kind === 'bucket' ? resource.startsWith(`${arn}/`) : false;
      if (resource === arn || under) return { stack, ...what };
    }
  }
  return undefined;
}

/** One recorded request, judged: allowed by its function's own policy, and where its resource lives. */
interface Verdict {
  readonly fn: string;
  readonly request: AccessRequest;
  readonly allowed: boolean;
  /** `<stack>: <kind> <construct name>`, or `(no stack)` for `*` and unknown resources. */
  readonly owner: string;
  readonly crossStack: boolean;
  readonly crossStackTable: boolean;
}

/** The verdicts on `calls`. */
function judge(calls: readonly SdkCall[]): Verdict[] {
  return calls.flatMap((call) => {
    const [stackName = '', ...path] = call.fn.split('/');
    const own = stacks.find((stack) => stack.name === stackName);
    if (own === undefined) throw new Error(`${call.fn} is in no running stack`);
    const statements = own.statementsOf(path.join('/'));
    return requestsOf(call).map((request) => {
      const owner = request.resource === '*' ? undefined : ownerOf(request.resource);
      const crossStack = owner !== undefined && owner.stack !== own;
      return {
        fn: call.fn,
        request,
        allowed: isAllowed(request, statements),
        owner:
          owner === undefined
            ? '(no stack)'
            : `${owner.stack.name}: ${owner.kind} ${constructName(owner.stack.template, owner.logicalId)}`,
        crossStack,
        crossStackTable: crossStack && owner?.kind === 'table',
      };
    });
  });
}

const describeVerdict = (verdict: Verdict): string =>
  `${verdict.fn} ${verdict.request.action} on ${verdict.owner} (${verdict.request.resource})`;

describe('least privilege across the three services, proven from the recorded SDK calls', () => {
  it('recorded calls from every function of the three stacks', () => {
    expect(recorder.functions()).toEqual([...exampleFunctionNames()].sort());
  });

  it('allows each call by the policy of the calling function’s own role, in its own stack', () => {
    const verdicts = judge(recorder.calls());
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.filter((verdict) => !verdict.allowed).map(describeVerdict)).toEqual([]);
    expect(verdicts.filter((verdict) => verdict.owner === '(no stack)').map(describeVerdict)).toEqual([]);
  });

  it('touches no table of another stack: each stack’s functions use only their own stack’s tables', () => {
    const verdicts = judge(recorder.calls());
    expect(verdicts.filter((verdict) => verdict.crossStackTable).map(describeVerdict)).toEqual([]);
    const tablesUsed = (stack: string) =>
      [
        ...new Set(
          verdicts
            .filter(
              (verdict) =>
                verdict.fn.startsWith(`${stack}/`) && verdict.request.action.startsWith('dynamodb:'),
            )
            .map((verdict) => verdict.owner),
        ),
      ].sort();
    expect(tablesUsed('OutboxOrders')).toEqual([
      'OutboxOrders: table Orders',
      'OutboxOrders: table Outbox/AuditTable',
      'OutboxOrders: table Outbox/Table',
    ]);
    expect(tablesUsed('OutboxInventory')).toEqual([
      'OutboxInventory: table Inventory/ConsumerInbox',
      'OutboxInventory: table Stock',
    ]);
    expect(tablesUsed('OutboxLoyalty')).toEqual([
      'OutboxLoyalty: table Loyalty/ConsumerInbox',
      'OutboxLoyalty: table Points',
    ]);
  });

  it('crosses stacks only by messages: the relay and the sweeper to the subscribers’ queues, the consumers to the receipt queue', () => {
    const crossing = [
      ...new Set(
        judge(recorder.calls())
          .filter((verdict) => verdict.crossStack)
          .map((verdict) => `${verdict.fn} ${verdict.request.action} → ${verdict.owner}`),
      ),
    ].sort();
    expect(crossing).toEqual([
      'OutboxInventory/Inventory/Consumer sqs:SendMessage → OutboxOrders: queue Outbox/ReceiptsQueue/Queue',
      'OutboxLoyalty/Loyalty/Consumer sqs:SendMessage → OutboxOrders: queue Outbox/ReceiptsQueue/Queue',
      'OutboxOrders/Outbox/Relay sqs:SendMessage → OutboxInventory: queue Inventory/Queue/Queue',
      'OutboxOrders/Outbox/Relay sqs:SendMessage → OutboxLoyalty: queue Loyalty/Queue/Queue',
      'OutboxOrders/Outbox/Sweeper sqs:SendMessage → OutboxInventory: queue Inventory/Queue/Queue',
      'OutboxOrders/Outbox/Sweeper sqs:SendMessage → OutboxLoyalty: queue Loyalty/Queue/Queue',
    ]);
  });

  it('confirms deliveries in the outbox (the receipts function) only with what its grant’s conditions allow', () => {
    const confirmations = recorder
      .calls(FUNCTIONS.receipts)
      .filter(
        (call) => call.command === 'UpdateItem' && call.table === services.runtime.outputs.outboxTableName,
      );
    expect(confirmations.length).toBeGreaterThan(0);
    expect(judge(confirmations).every((verdict) => verdict.allowed)).toBe(true);
    // The same update writing the payload, or asking the item back, is refused by the conditions.
    const [confirmation] = confirmations;
    if (confirmation === undefined) throw new Error('no confirmation recorded');
    const widened = { ...confirmation, attributes: [...(confirmation.attributes ?? []), 'payload'] };
    const returning = { ...confirmation, returnValues: 'ALL_NEW' };
    expect(judge([widened, returning]).map((verdict) => verdict.allowed)).toEqual([false, false]);
  });

  it('would catch a subscriber’s consumer that wrote the producer’s outbox table: refused, and a table of another stack', () => {
    const outboxTable = services.runtime.outputs.outboxTableName ?? '';
    const [confirmInOutbox] = judge([
      {
        fn: FUNCTIONS.consumers.inventory,
        service: 'dynamodb',
        command: 'UpdateItem',
        table: outboxTable,
        attributes: ['status', 'confirmedAt'],
        returnValues: 'NONE',
      },
    ]);

    expect(confirmInOutbox).toMatchObject({
      allowed: false,
      crossStackTable: true,
      owner: 'OutboxOrders: table Outbox/Table',
    });
  });
});

/** A moment past the confirmation deadline of a delivery sent now. */
const pastDeadline = () => new Date(Date.now() + DEFAULT_CONFIRM_DEADLINE_MS + 1_000);

/** Drives every function of the three services through the paths the end-to-end suites take. */
async function drive(app: Services): Promise<void> {
  const { runtime, faults } = app;
  // The services' own routes: stock set and read, points read (known and unknown), a refused order.
  await putStock(runtime, 'SKU-IAM', 50);
  await putStock(runtime, 'SKU-IAM-NONE', 0);
  expect(await stockOf(runtime, 'SKU-IAM')).toBe(50);
  expect(await pointsOf(runtime, 'iam-nobody')).toBeUndefined();
  expect((await request(runtime, 'POST /orders', { customerId: 'iam-bad', items: [] })).status).toBe(400);

  // An order through both subscribers, its cancellation, an out-of-stock order.
  const created = await placeOrder(runtime, {
    orderId: 'iam-order',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM', quantity: 2 }],
  });
  await waitForConfirmed(runtime, created.orderId);
  expect(await pointsOf(runtime, 'iam-customer')).toBe(20);
  await cancelOrder(runtime, created.orderId);
  await waitForConfirmed(runtime, created.orderId, 2);
  const empty = await placeOrder(runtime, {
    orderId: 'iam-empty',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM-NONE', quantity: 1 }],
  });
  await waitForConfirmed(runtime, empty.orderId);

  // A delivery again to each subscriber: its inbox refuses it and sends the receipt again.
  const sqs = sqsClient(runtime);
  for (const subscriber of ['inventory', 'loyalty'] as const) {
    const [first] = receivedOf(app, subscriber, created.messageId);
    await sqs.send(
      new SendMessageCommand({ QueueUrl: app.queueUrl(subscriber), MessageBody: first?.record.body }),
    );
  }
  sqs.destroy();
  await app.settle();

  // Inventory's receipts lost: the sweeper resends to inventory past the deadline; the next receipt confirms.
  faults.dropReceipts.add('inventory');
  const lost = await placeOrder(runtime, {
    orderId: 'iam-lost-receipt',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM', quantity: 1 }],
  });
  await waitForDelivery(runtime, { orderId: lost.orderId, subscriber: 'loyalty', status: 'CONFIRMED' });
  await waitFor(async () =>
    app.seen.lostReceipts.some((r) => r.messageId === lost.messageId) ? true : undefined,
  );
  await app.settle();
  faults.dropReceipts.clear();
  expect((await app.sweepAt(pastDeadline())).requeued).toBeGreaterThanOrEqual(1);
  await waitForConfirmed(runtime, lost.orderId);

  // Loyalty down while an order flows: the sweeper resends to loyalty alone; loyalty catches up once back.
  await app.pause('loyalty');
  const outage = await placeOrder(runtime, {
    orderId: 'iam-outage',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM', quantity: 1 }],
  });
  await waitForDelivery(runtime, { orderId: outage.orderId, subscriber: 'inventory', status: 'CONFIRMED' });
  await app.sweepAt(pastDeadline());
  app.resume('loyalty');
  await waitForConfirmed(runtime, outage.orderId);

  // A delivery FAILED at loyalty, read and replayed through the admin API, then sent by the sweeper.
  faults.hideFromRelay.add(deliveryKey('iam-failed', 'loyalty'));
  faults.refuseSends.add('loyalty');
  const failed = await placeOrder(runtime, {
    orderId: 'iam-failed',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM', quantity: 1 }],
  });
  await waitForDelivery(runtime, { orderId: failed.orderId, subscriber: 'inventory', status: 'CONFIRMED' });
  await app.sweepAt(new Date(Date.now() + 61_000), { maxAttempts: { loyalty: 1 } });
  clearFaults(faults);
  expect((await request(runtime, 'GET /admin/stats?subscriber=loyalty')).status).toBe(200);
  const listed = await request(runtime, 'GET /admin/messages?status=FAILED&subscriber=loyalty');
  expect(listed.body.items).toEqual([expect.objectContaining({ messageId: failed.messageId })]);
  expect((await request(runtime, `GET /admin/messages/${failed.messageId}`)).status).toBe(200);
  const replay = await request(runtime, `POST /admin/messages/${failed.messageId}/replay`, {
    reason: 'least privilege',
    subscriber: 'loyalty',
  });
  expect(replay.status).toBe(200);
  await app.sweepAt(new Date());
  await waitForConfirmed(runtime, failed.orderId);

  // A dead letter at loyalty (its consumer's own), redriven from loyalty's stack by the operator.
  faults.deadLetter.add(deliveryKey('iam-dead', 'loyalty'));
  const dead = await placeOrder(runtime, {
    orderId: 'iam-dead',
    customerId: 'iam-customer',
    items: [{ sku: 'SKU-IAM', quantity: 1 }],
  });
  await waitForDelivery(runtime, { orderId: dead.orderId, subscriber: 'inventory', status: 'CONFIRMED' });
  await waitFor(async () => (receivedOf(app, 'loyalty', dead.messageId).length > 0 ? true : undefined));
  await app.settle();
  const redrive = await outbox(
    runtime,
    '--stack',
    LOCAL_STACKS.loyalty,
    'redrive',
    '--reason',
    'least privilege',
  );
  expect(redrive.code).toBe(0);
  await waitForConfirmed(runtime, dead.orderId);

  // An erase of the cancelled order through the admin API: each subscriber applies it and sends its receipt.
  const erase = await request(runtime, `POST /admin/aggregates/${created.orderId}/erase`, {
    reason: 'least privilege',
  });
  expect(erase.status).toBe(200);
  // The order's page shows its own events only; the erases sent to the subscribers are rows of the outbox.
  await waitFor(async () => {
    const rows = await outboxRowsOf(runtime, created.orderId);
    return rows.length === 2 && rows.every((row) => row.status === 'CONFIRMED') ? true : undefined;
  });

  // The deployed sweeper's own run: its backlog gauges read the due and attention indexes.
  await app.invokeSweeper();
  await app.settle();
}
