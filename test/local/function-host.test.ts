/**
 * Functions in a process of their own, on the Node.js their `Runtime` names, and hot reload: a project with a
 * REST route whose handler imports a module, run on the embedded backend; the test edits the handler and the
 * module it imports while the runtime runs (and once with a syntax error) and watches what the route answers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNodeBinary } from '../../infra/dev/local/host/node-runtime.ts';
import { type LocalRuntime, startLocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import type { CloudFormationTemplate } from '../../infra/dev/local/template/cloudformation-template.ts';

/** A template with one function per runtime, each behind a GET route (what the local runtime reads of a CDK app). */
function template(
  functions: Readonly<Record<string, { entry: string; runtime: string }>>,
): CloudFormationTemplate {
  const resources: Record<string, unknown> = {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'hot' } },
    Counts: {
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
      Metadata: { 'aws:cdk:path': 'Hot/Counts/Resource' },
    },
  };
  for (const [name, { entry, runtime }] of Object.entries(functions)) {
    resources[`${name}Fn`] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Runtime: runtime,
        Handler: 'index.handler',
        Timeout: 10,
        Environment: { Variables: { COUNTS_TABLE: { Ref: 'Counts' } } },
      },
      Metadata: { 'aws:cdk:path': `Hot/${name}/Resource`, 'serverless-outbox:entry': entry },
    };
    resources[`${name}Resource`] = {
      Type: 'AWS::ApiGateway::Resource',
      Properties: {
        ParentId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] },
        PathPart: name.toLowerCase(),
        RestApiId: { Ref: 'Api' },
      },
    };
    resources[`${name}Get`] = {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'GET',
        ResourceId: { Ref: `${name}Resource` },
        RestApiId: { Ref: 'Api' },
        AuthorizationType: 'NONE',
        Integration: {
          Type: 'AWS_PROXY',
          IntegrationHttpMethod: 'POST',
          Uri: {
            'Fn::Join': [
              '',
              [
                'arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/',
                { 'Fn::GetAtt': [`${name}Fn`, 'Arn'] },
                '/invocations',
              ],
            ],
          },
        },
      },
    };
  }
  return { Resources: resources } as unknown as CloudFormationTemplate;
}

const handlerSource = (answer: string): string => `
import { greeting } from './greeting.ts';
export async function handler() {
  return { statusCode: 200, body: JSON.stringify({ answer: ${JSON.stringify(answer)}, greeting, node: process.version, pid: process.pid }) };
}
`;

let projectDir: string;
let runtime: LocalRuntime;
const log: string[] = [];

async function answer(): Promise<{ answer: string; greeting: string; node: string; pid: number }> {
  const response = await fetch(`${runtime.apiUrl}/hello`);
  return (await response.json()) as { answer: string; greeting: string; node: string; pid: number };
}

beforeAll(async () => {
  projectDir = mkdtempSync(join(tmpdir(), 'hot-reload-'));
  writeFileSync(join(projectDir, 'greeting.ts'), "export const greeting = 'hello';\n");
  writeFileSync(join(projectDir, 'handler.ts'), handlerSource('first'));
  runtime = await startLocalRuntime({
    backend: 'embedded',
    port: 0,
    projectDir,
    stackName: 'Hot',
    template: template({ Hello: { entry: 'handler.ts', runtime: 'nodejs24.x' } }),
    functionHost: 'process',
    hotReload: true,
    log: (line) => log.push(line),
  });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(projectDir, { recursive: true, force: true });
});

describe('functions in a process of the Node.js their runtime names', () => {
  it('runs a nodejs24.x handler on Node 24, in a process other than the runtime', async () => {
    const first = await answer();
    expect(first.node).toMatch(/^v24\./);
    expect(first.pid).not.toBe(process.pid);
    expect(runtime.functionNodes.Hello).toEqual({ version: first.node, host: 'process' });
  });

  it('refuses to start a function whose Node.js major is not installed, naming the command that installs it', async () => {
    await expect(
      startLocalRuntime({
        backend: 'embedded',
        port: 0,
        projectDir,
        stackName: 'Old',
        template: template({ Old: { entry: 'handler.ts', runtime: 'nodejs18.x' } }),
        functionHost: 'process',
        log: () => {},
      }),
    ).rejects.toMatchObject({
      code: 'RUNTIME_UNAVAILABLE',
      message: expect.stringContaining('npm install --save-dev node@18'),
    });
  });

  it('finds the Node 24 the project installs from the npm registry', () => {
    expect(findNodeBinary(24, process.cwd()).version).toMatch(/^v24\./);
  });
});

describe('hot reload', () => {
  it('serves an edited handler at the next invocation, keeping the tables and their data', async () => {
    const before = await answer();
    const { DynamoDBClient, PutItemCommand, GetItemCommand } = await import('@aws-sdk/client-dynamodb');
    const dynamodb = new DynamoDBClient(runtime.clientConfig);
    const table = runtime.env.Hello?.COUNTS_TABLE ?? '';
    await dynamodb.send(new PutItemCommand({ TableName: table, Item: { id: { S: 'kept' } } }));

    writeFileSync(join(projectDir, 'handler.ts'), handlerSource('second'));
    await expect.poll(async () => (await answer()).answer, { timeout: 30_000, interval: 200 }).toBe('second');
    const after = await answer();
    expect(after.pid).not.toBe(before.pid);
    const { Item } = await dynamodb.send(
      new GetItemCommand({ TableName: table, Key: { id: { S: 'kept' } } }),
    );
    expect(Item).toEqual({ id: { S: 'kept' } });
    dynamodb.destroy();
  });

  it('reloads when a module the handler imports changes', async () => {
    writeFileSync(join(projectDir, 'greeting.ts'), "export const greeting = 'bonjour';\n");
    await expect
      .poll(async () => (await answer()).greeting, { timeout: 30_000, interval: 200 })
      .toBe('bonjour');
  });

  it('keeps the previous code serving after an edit that does not compile, and says where it fails', async () => {
    const serving = await answer();
    writeFileSync(join(projectDir, 'handler.ts'), `${handlerSource('third')}\nexport const broken = ;\n`);
    await expect
      .poll(() => log.join('\n'), { timeout: 30_000, interval: 200 })
      .toMatch(/handler\.ts changed, but the functions do not load; the previous code keeps serving/);
    expect(log.join('\n')).toMatch(/handler\.ts:\d+:\d+/);
    expect(await answer()).toEqual(serving);

    writeFileSync(join(projectDir, 'handler.ts'), handlerSource('fixed'));
    await expect.poll(async () => (await answer()).answer, { timeout: 30_000, interval: 200 }).toBe('fixed');
  });

  it('lets an invocation in flight finish on the code it started with', async () => {
    writeFileSync(
      join(projectDir, 'handler.ts'),
      `
export async function handler() {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  return { statusCode: 200, body: JSON.stringify({ answer: 'slow-old', greeting: '', node: process.version, pid: process.pid }) };
}
`,
    );
    await expect
      .poll(async () => (await answer()).answer, { timeout: 30_000, interval: 200 })
      .toBe('slow-old');
    const inFlight = answer();
    // Give the request time to reach the old host before the edit lands.
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(join(projectDir, 'handler.ts'), handlerSource('new'));
    expect((await inFlight).answer).toBe('slow-old');
    await expect.poll(async () => (await answer()).answer, { timeout: 30_000, interval: 200 }).toBe('new');
  });
});
