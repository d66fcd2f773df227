/**
 * The local runtime on a second CDK app with a layout of its own (test/local/fixtures/notes-app): its own
 * table with a stream, a queue, two functions (one built with `withEnv`, one plain), a route and a schedule,
 * synthesized in-process and run end to end on the test backend (moto, else embedded) from the template alone.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersHttp } from '../../infra/dev/local/backends/moto-server.ts';
import { type LocalRuntime, startLocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { itOnMoto, TEST_BACKEND } from '../integration/support/backend.ts';
import { synthNotesTemplate } from './fixtures/notes-app/notes-stack.ts';

let runtime: LocalRuntime;
let template: Record<string, unknown>;
const logLines: string[] = [];

beforeAll(async () => {
  template = synthNotesTemplate();
  runtime = await startLocalRuntime({
    backend: TEST_BACKEND,
    port: 0,
    template,
    log: (line) => logLines.push(line),
    pollIntervalMs: 100,
    // A wrapper around one handler shows that overrides reach the API; the rest stays real.
    handlers: {
      Writer: (base) => async (event, context) => {
        const result = await base(event, context);
        return { ...(result as object), headers: { 'x-wrapped': 'yes' } };
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The physical id of construct `name`'s resource (its logical id: the name and a hash). */
function physicalId(name: string): string {
  const ownId = new RegExp(`^${name}[0-9A-F]{8}$`);
  const resource = [...runtime.resources.values()].find((candidate) => ownId.test(candidate.logicalId));
  if (resource === undefined) throw new Error(`no resource ${name}`);
  return resource.physicalId;
}

async function note(noteId: string): Promise<Record<string, unknown> | undefined> {
  const client = new DynamoDBClient(runtime.clientConfig);
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: physicalId('Notes'),
      Key: { noteId: { S: noteId } },
      ConsistentRead: true,
    }),
  );
  client.destroy();
  return Item;
}

async function putNote(noteId: string, text: string): Promise<Response> {
  return fetch(`${runtime.apiUrl}/notes/${noteId}`, { method: 'PUT', body: JSON.stringify({ text }) });
}

describe('startLocalRuntime on another app', () => {
  it('deploys the template on a fresh backend as <stack>-local and runs what the template describes', () => {
    expect(runtime).toMatchObject({
      backend: TEST_BACKEND,
      stackName: 'NotesApp-local',
      deployment: 'created',
    });
    expect(Object.keys(runtime.functions)).toEqual(['Writer', 'Audit/Auditor']);
    expect(runtime.functions['Audit/Auditor']?.plain).toBe(true);
    expect(runtime.functions.Writer?.plain).toBe(false);
    expect(runtime.pollers.map((poller) => poller.description)).toEqual([
      expect.stringMatching(
        /^Audit\/Auditor ← NotesApp-local-Notes\w+-\w+ stream: batch 5, window 0s, filter \[\{"eventName":\["INSERT"\]\}\], retries 2, bisect on, max age 3600s, partial batch responses, on failure → destination queue$/,
      ),
      expect.stringMatching(
        /^Audit\/Auditor ← NotesApp-local-AuditQueue\w+-\w+ queue: batch 3, window 0s, partial batch responses/,
      ),
    ]);
    expect(runtime.schedules.map((schedule) => schedule.description)).toEqual([
      'Writer ← schedule Tick: rate(1 minute) with input {"tick":true}',
    ]);
    expect(runtime.stateLocation).toBe('memory');
  });

  it('resolves each function’s environment against the deployed stack', () => {
    expect(runtime.env.Writer).toMatchObject({
      NOTES_TABLE: physicalId('Notes'),
      NOTES_TABLE_ARN: `arn:aws:dynamodb:us-east-1:123456789012:table/${physicalId('Notes')}`,
      GREETING: 'hello from the notes app',
      AWS_ENDPOINT_URL: runtime.endpoint,
      AWS_LAMBDA_FUNCTION_NAME: physicalId('Writer'),
    });
    const queueUrl = physicalId('AuditQueue');
    expect(runtime.env['Audit/Auditor']).toMatchObject({
      AUDIT_QUEUE_URL: queueUrl,
      AUDIT_LABEL: `us-east-1/${queueUrl.split('/').pop()}`,
      NOTES_STREAM: expect.stringMatching(new RegExp(`:table/${physicalId('Notes')}/stream/`)),
    });
  });

  itOnMoto('the transaction serializer stands in front of moto only')(
    'gives the functions and its own clients the transaction serializer in front of moto as their endpoint',
    async () => {
      expect(runtime.emulatorEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(runtime.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(runtime.endpoint).not.toBe(runtime.emulatorEndpoint);
      for (const env of Object.values(runtime.env)) expect(env.AWS_ENDPOINT_URL).toBe(runtime.endpoint);
      expect(runtime.clientConfig.endpoint).toBe(runtime.endpoint);
    },
  );

  it('serves the route through the real handler, with path parameters and overrides applied', async () => {
    const put = await putNote('n-1', 'first');
    expect(put.status).toBe(201);
    expect(put.headers.get('x-wrapped')).toBe('yes');
    const get = await fetch(`${runtime.apiUrl}/notes/n-1`);
    expect(await get.json()).toMatchObject({ noteId: 'n-1', text: 'first', writtenBy: physicalId('Writer') });
    expect((await fetch(`${runtime.apiUrl}/notes/n-1`, { method: 'DELETE' })).status).toBe(405);
  });

  it('carries a new note from the table’s stream through the queue back to the table, once', async () => {
    expect((await putNote('n-2', 'audit me')).status).toBe(201);
    await expect
      .poll(async () => (await note('n-2'))?.audited, { timeout: 20_000, interval: 200 })
      .toEqual({ BOOL: true });
    expect(await note('n-2')).toMatchObject({
      audits: { N: '1' },
      auditLabel: { S: `us-east-1/${physicalId('AuditQueue').split('/').pop()}` },
    });
  });

  it('retries a failing stream record as the mapping says and then reports it to the on-failure queue', async () => {
    await runtime.pausePollers();
    expect((await putNote('n-poison', 'poison')).status).toBe(201);
    for (let round = 0; round < 4; round += 1) await runtime.pollOnce();
    const sqs = new SQSClient(runtime.clientConfig);
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: physicalId('AuditStreamFailures'), MaxNumberOfMessages: 10 }),
    );
    sqs.destroy();
    expect(Messages?.map((message) => JSON.parse(message.Body ?? '{}'))).toEqual([
      expect.objectContaining({
        requestContext: expect.objectContaining({
          condition: 'RetryAttemptsExhausted',
          approximateInvokeCount: 3,
          functionArn: `arn:aws:lambda:us-east-1:123456789012:function:${physicalId('AuditAuditor')}`,
        }),
        DDBStreamBatchInfo: expect.objectContaining({ batchSize: 1 }),
      }),
    ]);
    expect(await note('n-poison')).not.toHaveProperty('audited');
    runtime.resumePollers();
  });

  it('runs the schedule’s target with the rule’s constant input', async () => {
    const [tick] = runtime.schedules;
    // Paused, so the schedule's own minute cannot add a tick on a slow machine; counted from what is there.
    await tick?.pause();
    const before = Number(((await note('ticks'))?.ticks as { N?: string } | undefined)?.N ?? 0);
    await tick?.pollOnce();
    await tick?.pollOnce();
    expect((await note('ticks'))?.ticks).toEqual({ N: String(before + 2) });
    tick?.resume();
  });

  it('invokes a function by name, and refuses a name it does not run', async () => {
    expect(await runtime.invoke('Writer', { tick: true })).toMatchObject({
      ok: true,
      result: { ticked: true },
    });
    await expect(runtime.invoke('Reader', {})).rejects.toMatchObject({
      code: 'UNKNOWN_FUNCTION',
      message: 'no function Reader runs locally (functions: Writer, Audit/Auditor)',
    });
  });

  it('drains after a pause, then resumes the pollers', async () => {
    await runtime.pausePollers();
    expect(runtime.pollers.every((poller) => poller.paused)).toBe(true);
    expect((await putNote('n-3', 'paused')).status).toBe(201);
    expect(await note('n-3')).not.toHaveProperty('audited');
    await runtime.drain();
    expect((await note('n-3'))?.audited).toEqual({ BOOL: true });
    runtime.resumePollers();
    expect(runtime.pollers.some((poller) => poller.paused)).toBe(false);
  });

  it('stops the backend it started and puts back what the plain handler set in process.env', async () => {
    expect(process.env.AUDIT_QUEUE_URL).toBe(physicalId('AuditQueue'));
    const pid = runtime.emulatorPid;
    if (TEST_BACKEND === 'moto') expect(isAlive(pid ?? -1)).toBe(true);
    else expect(pid).toBeUndefined();
    await runtime.stop();
    if (pid !== undefined) expect(isAlive(pid)).toBe(false);
    expect(await answersHttp(runtime.emulatorEndpoint)).toBe(false);
    expect(await answersHttp(runtime.endpoint)).toBe(false);
    expect(process.env.AUDIT_QUEUE_URL).toBeUndefined();
    expect(logLines.join('\n')).toMatch(
      /\[Audit\/Auditor\] gave up on 1 record\(s\) \(RetryAttemptsExhausted\)/,
    );
  });
});

describe('startLocalRuntime options', () => {
  it('refuses an override for a function the template does not have, rather than run without it', async () => {
    await expect(
      startLocalRuntime({ port: 0, template, log: () => {}, handlers: { Wrtier: (base) => base } }),
    ).rejects.toMatchObject({ code: 'UNKNOWN_FUNCTION', message: /no function Wrtier runs locally/ });
  });
});
