/**
 * The local runtime on an app of two stacks (test/local/fixtures/mail-app), synthesized in-process and run on the
 * test backend (moto, else embedded): both stacks deployed, the importing one after the exporting one; every
 * route on one port; a letter posted to one stack's route travels through its queue and its courier to the other
 * stack's queue (named by a URL built from pseudo parameters) and is recorded there, once; functions found by
 * `<stack>/<path>` or by the path alone when it names one; what two stacks may not share refused at start; and
 * restarts — against an emulator that outlives the runtime, and on a data folder — that keep every stack.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MotoServer, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import {
  type LocalRuntime,
  type LocalRuntimeOptions,
  startLocalRuntime,
} from '../../infra/dev/local/host/runtime.ts';
import type { CloudFormationTemplate } from '../../infra/dev/local/template/cloudformation-template.ts';
import { LOCAL_SYNTH_CONTEXT } from '../../infra/dev/local/template/synthesize-app.ts';
import { describeOnMoto, TEST_BACKEND } from '../integration/support/backend.ts';
import { mailFunction, RECEIPT_QUEUE_NAME, synthMailTemplates } from './fixtures/mail-app/mail-stacks.ts';

let runtime: LocalRuntime;
let mail: ReturnType<typeof synthMailTemplates>;
const logLines: string[] = [];

beforeAll(async () => {
  mail = synthMailTemplates();
  runtime = await startLocalRuntime({
    backend: TEST_BACKEND,
    port: 0,
    // The importing stack first: the runtime deploys it after the stack whose export it imports.
    templates: [
      { stackName: 'Mailroom', template: mail.mailroom },
      { stackName: 'Shop', template: mail.shop },
    ],
    log: (line) => logLines.push(line),
    pollIntervalMs: 100,
  });
});

afterAll(async () => {
  await runtime?.stop();
});

/** The physical id of the resource of stack `stack` whose logical id is construct `name` and a hash. */
function physicalId(stack: string, name: string): string {
  const resources = runtime.stacks.find((candidate) => candidate.name === stack)?.resources ?? new Map();
  const ownId = new RegExp(`^${name}[0-9A-F]{8}$`);
  const resource = [...resources.values()].find((candidate) => ownId.test(candidate.logicalId));
  if (resource === undefined) throw new Error(`no resource ${name} in ${stack}`);
  return resource.physicalId;
}

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
async function json(path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const response = await fetch(`${runtime.apiUrl}${path}`, init);
  return { status: response.status, body: await response.json() };
}

async function receipt(letterId: string): Promise<Record<string, { N?: string; S?: string }> | undefined> {
  const client = new DynamoDBClient(runtime.clientConfig);
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: physicalId('Shop', 'Receipts'),
      Key: { letterId: { S: letterId } },
      ConsistentRead: true,
    }),
  );
  client.destroy();
  return Item as Record<string, { N?: string; S?: string }> | undefined;
}

describe('startLocalRuntime on an app of two stacks', () => {
  it('deploys every stack as <name>-local, the importing stack after the one it imports from', () => {
    expect(
      runtime.stacks.map(({ name, displayName, deployedName, deployment }) => ({
        name,
        displayName,
        deployedName,
        deployment,
      })),
    ).toEqual([
      { name: 'Shop', displayName: 'Shop', deployedName: 'Shop-local', deployment: 'created' },
      { name: 'Mailroom', displayName: 'Mailroom', deployedName: 'Mailroom-local', deployment: 'created' },
    ]);
    expect(runtime).toMatchObject({ backend: TEST_BACKEND, stackName: 'Shop-local', deployment: 'created' });
    expect(runtime.app.stackName).toBeUndefined();
  });

  it('names each function <stack>/<construct path> and runs every stack’s mappings', () => {
    expect(Object.keys(runtime.functions)).toEqual([
      'Shop/Recorder',
      'Shop/Tally',
      'Shop/Lookup',
      'Shop/Health',
      'Mailroom/Post',
      'Mailroom/Courier',
      'Mailroom/Health',
    ]);
    expect(runtime.stacks.map((stack) => stack.app.functions.map((fn) => fn.name))).toEqual([
      ['Shop/Recorder', 'Shop/Tally', 'Shop/Lookup', 'Shop/Health'],
      ['Mailroom/Post', 'Mailroom/Courier', 'Mailroom/Health'],
    ]);
    expect(runtime.pollers.map((poller) => poller.description)).toEqual([
      expect.stringMatching(/^Shop\/Recorder ← shop-receipts queue: batch 5/),
      expect.stringMatching(/^Shop\/Tally ← Shop-local-Receipts\w+-\w+ stream: batch 100/),
      expect.stringMatching(/^Mailroom\/Courier ← Mailroom-local-Letters\w+-\w+ queue: batch 5/),
    ]);
  });

  it('resolves the imported value and the queue URL and ARN built from pseudo parameters', () => {
    const shop = runtime.stacks[0];
    const tableName = physicalId('Shop', 'Receipts');
    expect(runtime.env['Mailroom/Courier']).toMatchObject({
      RECEIPTS_TABLE: tableName,
      RECEIPT_QUEUE_URL: `https://sqs.us-east-1.amazonaws.com/123456789012/${RECEIPT_QUEUE_NAME}`,
      RECEIPT_QUEUE_ARN: `arn:aws:sqs:us-east-1:123456789012:${RECEIPT_QUEUE_NAME}`,
    });
    expect([...(shop?.exports.values() ?? [])]).toEqual([
      `arn:aws:dynamodb:us-east-1:123456789012:table/${tableName}`,
      tableName,
    ]);
    expect(runtime.stacks[1]?.exports.size).toBe(0);
  });

  it('gives every stack’s outputs by name, and every stack’s resources by <stack>/<logical id>', () => {
    for (const stack of runtime.stacks) {
      for (const [name, value] of Object.entries(stack.outputs)) expect(runtime.outputs[name]).toBe(value);
      for (const [logicalId, resource] of stack.resources) {
        expect(runtime.resources.get(`${stack.displayName}/${logicalId}`)).toBe(resource);
      }
    }
    expect(Object.keys(runtime.outputs)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ShopApiEndpoint/),
        expect.stringMatching(/^MailroomApi/),
      ]),
    );
    const total = runtime.stacks.reduce((sum, stack) => sum + stack.resources.size, 0);
    expect(runtime.resources.size).toBe(total);
  });

  it('serves every stack’s routes on one port, each event naming its own stack’s account', async () => {
    expect(await json('/shop/health')).toEqual({
      status: 200,
      body: { service: 'shop', accountId: '123456789012' },
    });
    expect(await json('/mailroom/health')).toEqual({
      status: 200,
      body: { service: 'mailroom', accountId: '123456789012' },
    });
    expect((await json('/receipts/never-sent')).status).toBe(404);
  });

  it('carries a letter from one stack’s route and queue to the other stack’s queue and records it once', async () => {
    const posted = await json('/letters', { method: 'POST', body: JSON.stringify({ letterId: 'l-1' }) });
    expect(posted).toEqual({ status: 202, body: { letterId: 'l-1' } });
    await expect
      .poll(async () => (await json('/receipts/l-1')).status, { timeout: 20_000, interval: 200 })
      .toBe(200);
    await runtime.drain();
    expect((await json('/receipts/l-1')).body).toEqual({
      letterId: 'l-1',
      deliveries: 1,
      deliveredBy: runtime.functions['Mailroom/Courier']?.physicalName,
    });
    expect((await receipt('tally'))?.receipts).toEqual({ N: '1' });
  });

  it('counts a letter delivered twice on its one receipt, sent by the queue URL built from pseudo parameters', async () => {
    const sqs = new SQSClient(runtime.clientConfig);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.env['Mailroom/Courier']?.RECEIPT_QUEUE_URL,
        MessageBody: JSON.stringify({ letterId: 'l-1', deliveredBy: 'a second courier' }),
      }),
    );
    sqs.destroy();
    await expect
      .poll(async () => (await receipt('l-1'))?.deliveries, { timeout: 20_000, interval: 200 })
      .toEqual({ N: '2' });
    await runtime.drain();
    // An update, not a new receipt: the tally still counts one.
    expect((await receipt('tally'))?.receipts).toEqual({ N: '1' });
  });

  it('finds a function by its construct path when only one stack has it, and refuses a path two stacks have', async () => {
    expect(runtime.env.Courier).toBe(runtime.env['Mailroom/Courier']);
    expect(runtime.functions.Lookup).toBe(runtime.functions['Shop/Lookup']);
    expect(Object.keys(runtime.env)).not.toContain('Courier');
    expect(runtime.env.Health).toBeUndefined();
    const lookup = await runtime.invoke('Lookup', { pathParameters: { letterId: 'nobody' } });
    expect(lookup).toMatchObject({ ok: true, result: { statusCode: 404 } });
    const health = await runtime.invoke('Mailroom/Health', { requestContext: { accountId: 'direct' } });
    expect(health).toMatchObject({
      ok: true,
      result: { body: '{"service":"mailroom","accountId":"direct"}' },
    });
    await expect(runtime.invoke('Health', {})).rejects.toMatchObject({
      code: 'AMBIGUOUS_FUNCTION',
      message:
        'Health names a function in 2 stacks (Shop/Health, Mailroom/Health); say which one with its stack: <stack>/<path>',
    });
    await expect(runtime.invoke('Nobody', {})).rejects.toMatchObject({
      code: 'UNKNOWN_FUNCTION',
      message: expect.stringMatching(/^no function Nobody runs locally \(functions: Shop\/Recorder, /),
    });
  });

  it('pauses, drains and resumes every stack’s pollers together', async () => {
    await runtime.pausePollers();
    expect((await json('/letters', { method: 'POST', body: '{"letterId":"l-2"}' })).status).toBe(202);
    expect(await receipt('l-2')).toBeUndefined();
    await runtime.drain();
    expect((await receipt('l-2'))?.deliveries).toEqual({ N: '1' });
    runtime.resumePollers();
    expect(runtime.pollers.some((poller) => poller.paused)).toBe(false);
  });
});

/** A stack of its own with one route, `method path`, and an output named `output` when given. */
function otherStack(options: { readonly route?: string; readonly output?: string }): CloudFormationTemplate {
  const app = new App({ context: { ...LOCAL_SYNTH_CONTEXT } });
  const stack = new Stack(app, 'Copycat');
  const fn = mailFunction(stack, 'Health', { handler: 'health', environment: { SERVICE: 'copycat' } });
  if (options.route !== undefined) {
    const [method = 'GET', path = '/'] = options.route.split(' ');
    const api = new apigateway.RestApi(stack, 'CopycatApi', { cloudWatchRole: false });
    api.root.resourceForPath(path).addMethod(method, new apigateway.LambdaIntegration(fn));
  }
  if (options.output !== undefined) new CfnOutput(stack, options.output, { value: 'copied' });
  return app.synth().getStackArtifact(stack.artifactId).template as CloudFormationTemplate;
}

describe('startLocalRuntime on several stacks: what it refuses', () => {
  const start = (
    templates: { stackName: string; template: CloudFormationTemplate }[],
    more: LocalRuntimeOptions = {},
  ) => startLocalRuntime({ backend: 'embedded', port: 0, templates, log: () => {}, ...more });

  it('refuses two stacks declaring the same method and path, naming both', async () => {
    const copycat = otherStack({ route: 'GET /receipts/{id}' });
    await expect(
      start([
        { stackName: 'Shop', template: mail.shop },
        { stackName: 'Copycat', template: copycat },
      ]),
    ).rejects.toMatchObject({
      code: 'STACK_CONFLICT',
      message:
        'stacks Shop and Copycat both declare GET /receipts/{id} (→ Shop/Lookup, → Copycat/Health); one port ' +
        "serves every stack's routes, so each method and path may belong to one stack only",
    });
  });

  it('refuses two stacks with an output of the same name, naming both', async () => {
    const [shared = ''] = Object.keys(mail.shop.Outputs ?? {});
    await expect(
      start([
        { stackName: 'Shop', template: mail.shop },
        { stackName: 'Copycat', template: otherStack({ output: shared }) },
      ]),
    ).rejects.toMatchObject({
      code: 'STACK_CONFLICT',
      message: expect.stringMatching(
        new RegExp(`^stacks Shop and Copycat both have an output named ${shared};`),
      ),
    });
  });

  it('refuses an override whose construct path two stacks have, and takes one that names one function', async () => {
    const templates = [
      { stackName: 'Shop', template: mail.shop },
      { stackName: 'Mailroom', template: mail.mailroom },
    ];
    await expect(start(templates, { handlers: { Health: (base) => base } })).rejects.toMatchObject({
      code: 'AMBIGUOUS_FUNCTION',
      message: /^Health names a function in 2 stacks \(Shop\/Health, Mailroom\/Health\)/,
    });
    const wrapped = await start(templates, {
      handlers: {
        'Shop/Health': (base) => async (event, context) => ({
          ...((await base(event, context)) as object),
          headers: { 'x-wrapped': 'shop' },
        }),
      },
    });
    try {
      const response = await fetch(`${wrapped.apiUrl}/shop/health`);
      expect(response.headers.get('x-wrapped')).toBe('shop');
      expect((await fetch(`${wrapped.apiUrl}/mailroom/health`)).headers.get('x-wrapped')).toBeNull();
    } finally {
      await wrapped.stop();
    }
  });

  it('says which stack is missing when stackName picks a stack whose imports another stack exports', async () => {
    await expect(
      start(
        [
          { stackName: 'Shop', template: mail.shop },
          { stackName: 'Mailroom', template: mail.mailroom },
        ],
        { stackName: 'Mailroom' },
      ),
    ).rejects.toMatchObject({
      code: 'DEPLOY_FAILED',
      message: expect.stringMatching(
        /^Mailroom depends on Shop, which this run does not deploy \(it runs Mailroom alone\); run every stack, or deploy Shop to this backend first: .*Shop:ExportsOutput/,
      ),
    });
  });

  it('runs only the stack stackName names, its functions named as when every stack runs', async () => {
    const shopOnly = await start(
      [
        { stackName: 'Shop', template: mail.shop },
        { stackName: 'Mailroom', template: mail.mailroom },
      ],
      { stackName: 'Shop' },
    );
    try {
      expect(shopOnly.stacks.map((stack) => stack.deployedName)).toEqual(['Shop-local']);
      expect(Object.keys(shopOnly.functions)).toEqual([
        'Shop/Recorder',
        'Shop/Tally',
        'Shop/Lookup',
        'Shop/Health',
      ]);
      // The one stack that runs has every path: the path alone names its function.
      expect(await shopOnly.invoke('Health', { requestContext: { accountId: 'direct' } })).toMatchObject({
        ok: true,
        result: { body: '{"service":"shop","accountId":"direct"}' },
      });
    } finally {
      await shopOnly.stop();
    }
  });
});

/** The mail app's templates with the courier's timeout changed: a change of the mailroom's stack only. */
function withCourierTimeout(seconds: number): CloudFormationTemplate {
  const resources = mail.mailroom.Resources;
  const [id, courier] =
    Object.entries(resources).find(([logicalId]) => /^Courier[0-9A-F]{8}$/.test(logicalId)) ?? [];
  if (id === undefined || courier === undefined) throw new Error('no courier in the mailroom template');
  return {
    ...mail.mailroom,
    Resources: {
      ...resources,
      [id]: { ...courier, Properties: { ...courier.Properties, Timeout: seconds } },
    },
  };
}

/** Posts a letter and waits until the shop has its receipt and the tally has counted it. */
async function deliver(running: LocalRuntime, letterId: string): Promise<void> {
  const posted = await fetch(`${running.apiUrl}/letters`, {
    method: 'POST',
    body: JSON.stringify({ letterId }),
  });
  expect(posted.status).toBe(202);
  await expect
    .poll(async () => (await fetch(`${running.apiUrl}/receipts/${letterId}`)).status, { timeout: 20_000 })
    .toBe(200);
  await running.drain();
}

/** A receipt, read over the shop's own route. */
async function receiptOver(
  running: LocalRuntime,
  letterId: string,
): Promise<{ readonly deliveries?: number; readonly receipts?: number }> {
  const response = await fetch(`${running.apiUrl}/receipts/${letterId}`);
  return (await response.json()) as { deliveries?: number; receipts?: number };
}

/** The tally's count of receipts. */
async function tallyOf(running: LocalRuntime): Promise<number | undefined> {
  return (await receiptOver(running, 'tally')).receipts;
}

/** Which stacks a start deployed, and how. */
const deploymentsOf = (running: LocalRuntime) =>
  running.stacks.map((stack) => [stack.deployedName, stack.deployment]);

describeOnMoto(
  "an emulator that outlives the runtime is deployed to through CloudFormation's CreateStack and UpdateStack, " +
    'which among the local backends only moto serves',
)('several stacks against an emulator that outlives the runtime', () => {
  let moto: MotoServer;
  let stateDir = '';

  beforeAll(async () => {
    moto = await startMotoServer();
    stateDir = mkdtempSync(join(tmpdir(), 'multi-stack-external-'));
  });

  afterAll(async () => {
    await moto?.stop();
    if (stateDir !== '') rmSync(stateDir, { recursive: true, force: true });
  });

  const start = (mailroom: CloudFormationTemplate, more: LocalRuntimeOptions = {}): Promise<LocalRuntime> =>
    startLocalRuntime({
      ...more,
      port: 0,
      endpoint: moto.endpoint,
      stateFile: join(stateDir, 'poller-state.json'),
      templates: [
        { stackName: 'Shop', template: mail.shop },
        { stackName: 'Mailroom', template: mailroom },
      ],
      pollIntervalMs: 100,
      log: (line) => logLines.push(line),
    });

  it('creates every stack on the first start and keys each checkpoint by its stack’s function', async () => {
    const first = await start(mail.mailroom);
    try {
      expect(deploymentsOf(first)).toEqual([
        ['Shop-local', 'created'],
        ['Mailroom-local', 'created'],
      ]);
      await deliver(first, 'l-1');
      expect(await tallyOf(first)).toBe(1);
    } finally {
      await first.stop();
    }
    const state = JSON.parse(readFileSync(join(stateDir, 'poller-state.json'), 'utf8'));
    expect(Object.keys(state.streams)).toEqual([
      expect.stringMatching(
        new RegExp(`^${moto.endpoint} arn:aws:dynamodb:.*:table/Shop-local-Receipts.*/stream/.* Shop/Tally$`),
      ),
    ]);
  });

  it('keeps every stack and its data on a restart, and resumes the stream after its checkpoint', async () => {
    const second = await start(mail.mailroom);
    try {
      expect(deploymentsOf(second)).toEqual([
        ['Shop-local', 'unchanged'],
        ['Mailroom-local', 'unchanged'],
      ]);
      expect(second.env['Mailroom/Courier']?.RECEIPTS_TABLE).toBe(second.env['Shop/Lookup']?.RECEIPTS_TABLE);
      await deliver(second, 'l-2');
      // l-1's INSERT was not handed to the tally again.
      expect(await tallyOf(second)).toBe(2);
    } finally {
      await second.stop();
    }
  });

  it('updates in place only the stack whose template changed', async () => {
    const third = await start(withCourierTimeout(9));
    try {
      expect(deploymentsOf(third)).toEqual([
        ['Shop-local', 'unchanged'],
        ['Mailroom-local', 'updated'],
      ]);
      expect(third.deployment).toBe('updated');
      expect(third.functions['Mailroom/Courier']?.definition.timeoutSeconds).toBe(9);
      await deliver(third, 'l-3');
      expect(await tallyOf(third)).toBe(3);
      expect((await receiptOver(third, 'l-1')).deliveries).toBe(1);
    } finally {
      await third.stop();
    }
  });

  it('runs one stack alone on the same checkpoints: its functions keep their names', async () => {
    const shopOnly = await start(mail.mailroom, { stackName: 'Shop' });
    try {
      expect(deploymentsOf(shopOnly)).toEqual([['Shop-local', 'unchanged']]);
      const sqs = new SQSClient(shopOnly.clientConfig);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: `https://sqs.us-east-1.amazonaws.com/123456789012/${RECEIPT_QUEUE_NAME}`,
          MessageBody: JSON.stringify({ letterId: 'l-4', deliveredBy: 'the test' }),
        }),
      );
      sqs.destroy();
      await expect
        .poll(async () => (await receiptOver(shopOnly, 'l-4')).deliveries, { timeout: 20_000 })
        .toBe(1);
      await shopOnly.drain();
      // Resumed after the checkpoint the runs of every stack saved: no receipt counted twice.
      expect(await tallyOf(shopOnly)).toBe(4);
    } finally {
      await shopOnly.stop();
    }
  });
});

describe('several stacks kept on disk by the embedded backend, their functions in processes of their own', () => {
  let dataDir = '';

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'multi-stack-data-'));
  });

  afterAll(() => {
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (): Promise<LocalRuntime> =>
    startLocalRuntime({
      backend: 'embedded',
      dataDir,
      functionHost: 'process',
      port: 0,
      templates: [
        { stackName: 'Shop', template: mail.shop },
        { stackName: 'Mailroom', template: mail.mailroom },
      ],
      pollIntervalMs: 100,
      log: (line) => logLines.push(line),
    });

  it('runs every stack’s functions in a host process, then finds both stacks and their data again', async () => {
    const first = await start();
    try {
      expect(deploymentsOf(first)).toEqual([
        ['Shop-local', 'created'],
        ['Mailroom-local', 'created'],
      ]);
      expect(first.functionNodes['Mailroom/Courier']?.host).toBe('process');
      expect(first.functionNodes.Courier).toBe(first.functionNodes['Mailroom/Courier']);
      await deliver(first, 'l-1');
      expect(await first.reloadFunctions()).toEqual({ ok: true });
    } finally {
      await first.stop();
    }
    const second = await start();
    try {
      expect(deploymentsOf(second)).toEqual([
        ['Shop-local', 'unchanged'],
        ['Mailroom-local', 'unchanged'],
      ]);
      expect((await receiptOver(second, 'l-1')).deliveries).toBe(1);
      await deliver(second, 'l-2');
      expect(await tallyOf(second)).toBe(2);
    } finally {
      await second.stop();
    }
  });
});
