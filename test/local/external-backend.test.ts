/**
 * The runtime against an emulator that outlives it (an endpoint, as AWS_ENDPOINT_URL gives one): each start
 * deploys the stack in place instead of replacing it, and the stream pollers resume from the checkpoints the
 * previous run saved. The notes app's auditor counts its audits with a non-idempotent ADD, so a replayed
 * stream record would show.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { answersHttp, type MotoServer, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import {
  type LocalRuntime,
  type LocalRuntimeOptions,
  startLocalRuntime,
} from '../../infra/dev/local/host/runtime.ts';
import type {
  CloudFormationTemplate,
  TemplateResource,
} from '../../infra/dev/local/template/cloudformation-template.ts';
import { describeOnMoto, TEST_BACKEND } from '../integration/support/backend.ts';
import { synthNotesTemplate } from './fixtures/notes-app/notes-stack.ts';

/** Why this file runs only on moto. */
const NEEDS_MOTO =
  "an emulator that outlives the runtime is deployed to through CloudFormation's CreateStack and UpdateStack, which among the local backends only moto serves; the embedded backend keeps its data across restarts with --data-dir, tested in test/local/data-dir.test.ts";

let moto: MotoServer;
let stateDir = '';
let template: CloudFormationTemplate;
const logLines: string[] = [];

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  moto = await startMotoServer();
  stateDir = mkdtempSync(join(tmpdir(), 'external-backend-'));
  template = synthNotesTemplate() as unknown as CloudFormationTemplate;
});

afterAll(async () => {
  await moto?.stop();
  if (stateDir !== '') rmSync(stateDir, { recursive: true, force: true });
});

function start(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    template,
    endpoint: moto.endpoint,
    stateFile: join(stateDir, 'poller-state.json'),
    pollIntervalMs: 100,
    log: (line) => logLines.push(line),
    ...options,
  });
}

/** The notes template with the writer's timeout changed: a change the emulator applies in place. */
function withWriterTimeout(seconds: number): CloudFormationTemplate {
  const [id, writer] =
    Object.entries(template.Resources).find(([logicalId]) => /^Writer[0-9A-F]{8}$/.test(logicalId)) ?? [];
  if (id === undefined || writer === undefined) throw new Error('no writer in the notes template');
  const changed: TemplateResource = { ...writer, Properties: { ...writer.Properties, Timeout: seconds } };
  return { ...template, Resources: { ...template.Resources, [id]: changed } };
}

async function note(
  runtime: LocalRuntime,
  noteId: string,
): Promise<Record<string, { N?: string; BOOL?: boolean }>> {
  const client = new DynamoDBClient(runtime.clientConfig);
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: runtime.env.Writer?.NOTES_TABLE,
      Key: { noteId: { S: noteId } },
      ConsistentRead: true,
    }),
  );
  client.destroy();
  return (Item ?? {}) as Record<string, { N?: string; BOOL?: boolean }>;
}

async function putAndAudit(runtime: LocalRuntime, noteId: string): Promise<void> {
  const response = await fetch(`${runtime.apiUrl}/notes/${noteId}`, {
    method: 'PUT',
    body: '{"text":"kept"}',
  });
  expect(response.status).toBe(201);
  try {
    await expect
      .poll(async () => (await note(runtime, noteId)).audited, { timeout: 20_000 })
      .toEqual({ BOOL: true });
  } catch (error) {
    throw new Error(`note ${noteId} was not audited; the runtime logged:\n${logLines.join('\n')}`, {
      cause: error,
    });
  }
}

describeOnMoto(NEEDS_MOTO)('startLocalRuntime against an emulator that outlives it', () => {
  it('creates the stack on the first start and saves the stream checkpoint to a file', async () => {
    const runtime = await start();
    try {
      expect(runtime).toMatchObject({ backend: 'external', deployment: 'created', emulatorPid: undefined });
      expect(runtime.stateLocation).toBe(join(stateDir, 'poller-state.json'));
      await putAndAudit(runtime, 'first');
    } finally {
      await runtime.stop();
    }
    const state = JSON.parse(readFileSync(join(stateDir, 'poller-state.json'), 'utf8'));
    const [streamKey] = Object.keys(state.streams);
    expect(streamKey).toMatch(new RegExp(`^${moto.endpoint} arn:aws:dynamodb:.*/stream/.* Audit/Auditor$`));
    expect(await answersHttp(moto.endpoint)).toBe(true);
  });

  it('updates the stack in place on a changed template, keeping the data and resuming the stream', async () => {
    const runtime = await start({ template: withWriterTimeout(9) });
    try {
      expect(runtime.deployment).toBe('updated');
      expect(runtime.functions.Writer?.definition.timeoutSeconds).toBe(9);
      await putAndAudit(runtime, 'second');
      await runtime.drain();
      // Resumed after its checkpoint: the first note's INSERT was not handed to the auditor again.
      expect((await note(runtime, 'first')).audits).toEqual({ N: '1' });
      expect((await note(runtime, 'second')).audits).toEqual({ N: '1' });
    } finally {
      await runtime.stop();
    }
  });

  it('keeps the stack as it is when the template did not change', async () => {
    const runtime = await start({ template: withWriterTimeout(9) });
    try {
      expect(runtime.deployment).toBe('unchanged');
      expect((await note(runtime, 'first')).audited).toEqual({ BOOL: true });
      await runtime.drain();
      expect((await note(runtime, 'second')).audits).toEqual({ N: '1' });
    } finally {
      await runtime.stop();
    }
  });
});
