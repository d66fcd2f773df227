import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CliClients } from '../../../shared/cli/run-cli.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import {
  type AdminFixture,
  adminFixture,
  ORDER_DLQ,
  ORDER_QUEUE,
  pipeline,
  storedMessage,
  storeMessage,
} from '../admin/admin-fixture.ts';
import { cloudFormationWith, exampleTemplate, run, STACK } from './cli-fixture.ts';

let restore: (() => void) | undefined;
let fixture: AdminFixture;
let hooks: string;

beforeAll(() => {
  exampleTemplate();
  hooks = mkdtempSync(join(tmpdir(), 'outbox-cli-hooks-'));
  writeFileSync(
    join(hooks, 'down.mjs'),
    'export async function checkHealth(topic) { return { healthy: false, detail: "inventory down for " + topic }; }\n',
  );
  writeFileSync(
    join(hooks, 'up.mjs'),
    'export async function checkHealth(topic, context) { return { healthy: true, detail: "ok in " + context.outbox.stackName }; }\n',
  );
  writeFileSync(join(hooks, 'none.mjs'), 'export const nothing = 1;\n');
}, 120_000);

afterAll(() => rmSync(hooks, { recursive: true, force: true }));

afterEach(() => {
  restore?.();
  restore = undefined;
});

/** Clients over the in-memory admin fixture, found through a mocked CloudFormation stack. */
function clients(overrides: Partial<CliClients> = {}): CliClients {
  fixture = adminFixture();
  const { mock, client } = cloudFormationWith();
  restore = () => mock.restore();
  return {
    cloudFormation: client,
    adminDeps: () => fixture.deps,
    clock: fixture.clock.now,
    sleep: fixture.deps.sleep,
    ...overrides,
  };
}

const withStack = (...argv: string[]) => ['--stack', STACK, ...argv];

describe('arguments and exit codes', () => {
  it('documents the exit codes in --help and exits 0', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Exit codes:');
    expect(result.stdout).toMatch(/3 {2}recover: the downstream is not healthy/);
  });

  it('exits 2 naming the option when a value is malformed', async () => {
    const result = await run(withStack('list', '--status', 'FAILED', '--limit', 'many'), {
      clients: clients(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("option '--limit <n>' argument 'many' is invalid");
  });

  it('exits 2 for an unknown command or option', async () => {
    expect((await run(['frobnicate'])).code).toBe(2);
    const unknown = await run(withStack('stats', '--colour'));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--colour'");
  });

  it('exits 2 when replay has no --reason', async () => {
    const result = await run(withStack('replay', 'm-1'), { clients: clients() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("required option '--reason <text>' not specified");
  });

  it('exits 2 when replay gets a message id and a bulk option together, naming the option', async () => {
    const result = await run(withStack('replay', 'm-1', '--reason', 'x', '--dry-run'), {
      clients: clients(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--dry-run is for a bulk replay by --topic');
  });

  it('exits 2 without --stack against AWS, and reports it as JSON with --json', async () => {
    const result = await run(['stats', '--json'], { clients: clients() });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      error: expect.objectContaining({
        code: 'INVALID_CONFIG',
        exitCode: 2,
        message: expect.stringContaining('--stack is required'),
      }),
    });
  });

  it('exits 2 when the stack does not exist', async () => {
    const result = await run(['--stack', 'Nope', 'stats'], { clients: clients() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('stack Nope: not found');
  });

  it('finds the local stack by itself against an emulator', async () => {
    const { mock, client } = cloudFormationWith({ stackName: 'OutboxExample-local' });
    fixture = adminFixture();
    restore = () => mock.restore();
    const result = await run(['stats', '--json'], {
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' },
      clients: { cloudFormation: client, adminDeps: () => fixture.deps },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).totals).toEqual({ PENDING: 0, SENT: 0, FAILED: 0, CANCELLED: 0 });
  });

  it('exits 4 for a message that does not exist, and for one in the wrong status', async () => {
    const missing = await run(withStack('show', 'nope'), { clients: clients() });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('no message nope in the outbox');

    const c = clients();
    await storeMessage(fixture, { messageId: 'm-confirmed', status: MessageStatus.CONFIRMED });
    const wrong = await run(withStack('replay', 'm-confirmed', '--reason', 'x'), { clients: c });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('message m-confirmed is CONFIRMED; replay needs FAILED or CANCELLED');
  });
});

describe('commands', () => {
  it('lists FAILED messages as a table and as one JSON document', async () => {
    const c = clients();
    await storeMessage(fixture, { messageId: 'm-failed', status: MessageStatus.FAILED, lastError: 'boom' });
    await storeMessage(fixture, { messageId: 'm-pending', status: MessageStatus.PENDING });

    const table = await run(withStack('list', '--status', 'FAILED'), { clients: c });
    expect(table.code).toBe(0);
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^MESSAGE ID +STATUS +TOPIC +AGGREGATE +ATTEMPTS +CREATED +LAST ERROR$/);
    expect(row).toMatch(/^m-failed +FAILED +order\.created .* boom$/);
    expect(rest).toEqual([]);

    const json = await run(withStack('list', '--status', 'FAILED', '--json'), { clients: c });
    expect(JSON.parse(json.stdout)).toEqual({ items: [expect.objectContaining({ messageId: 'm-failed' })] });
  });

  it('replays a FAILED message as the local operator, audited', async () => {
    const c = clients();
    await storeMessage(fixture, { messageId: 'm-1', status: MessageStatus.FAILED });
    const result = await run(withStack('replay', 'm-1', '--reason', 'inventory fixed', '--json'), {
      clients: c,
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ messageId: 'm-1', from: 'FAILED', to: 'PENDING' });
    const history = (await storedMessage(fixture, 'm-1'))?.history as { by?: string; reason?: string }[];
    expect(history.at(-1)).toMatchObject({ by: expect.stringMatching(/^local:/), reason: 'inventory fixed' });
  });

  it('names the caller from STS on AWS', async () => {
    const c = clients({ callerIdentity: async () => 'arn:aws:iam::123456789012:user/ana' });
    await storeMessage(fixture, { messageId: 'm-1', status: MessageStatus.PENDING });
    expect((await run(withStack('cancel', 'm-1', '--reason', 'withdrawn'), { clients: c })).code).toBe(0);
    const history = (await storedMessage(fixture, 'm-1'))?.history as { by?: string }[];
    expect(history.at(-1)?.by).toBe('arn:aws:iam::123456789012:user/ana');
  });

  it('bulk-replays a topic with progress lines on a non-terminal stderr, and a dry run changes nothing', async () => {
    const c = clients();
    for (const id of ['m-1', 'm-2', 'm-3'])
      await storeMessage(fixture, { messageId: id, status: MessageStatus.FAILED });

    const dry = await run(withStack('replay', '--topic', 'order.created', '--reason', 'x', '--dry-run'), {
      clients: c,
    });
    expect(dry.stdout).toContain('dry run: would replay 3 message(s)');
    expect((await storedMessage(fixture, 'm-1'))?.status).toBe('FAILED');

    const real = await run(withStack('replay', '--topic', 'order.created', '--reason', 'x', '--rate', '5'), {
      clients: c,
    });
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/^replayed 3 of 3 \(skipped 0, failed 0\)/);
    expect(real.stderr).toContain('replay [##############################] 3/3');
    expect(real.stderr).not.toContain('\r');
    // Paced: one replay every 200 ms at 5 a second.
    expect(fixture.sleeps).toEqual([200, 200]);
  });

  it('draws a bar in place on a terminal', async () => {
    const c = clients();
    await storeMessage(fixture, { messageId: 'm-1', status: MessageStatus.FAILED });
    const result = await run(withStack('replay', '--topic', 'order.created', '--reason', 'x'), {
      clients: c,
      tty: true,
    });
    expect(result.stderr).toMatch(/^\rreplay \[-+\] 0\/1.*\rreplay \[#+\] 1\/1.*\n$/s);
  });

  it('redrives only the chosen dead letters', async () => {
    const c = clients();
    for (const id of ['m-1', 'm-2']) {
      fixture.queues.send(ORDER_DLQ, {
        body: JSON.stringify({ messageId: id }),
        attributes: {
          message_id: { dataType: 'String', stringValue: id },
          topic: { dataType: 'String', stringValue: 'order.created' },
        },
      });
    }
    const result = await run(withStack('redrive', '--message-id', 'm-2', '--json'), { clients: c });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ moved: 1, left: 1 });
  });
});

describe('recover', () => {
  it('stops with exit code 3 when the health hook says the downstream is down, replaying nothing', async () => {
    const c = clients();
    await storeMessage(fixture, { messageId: 'm-1', status: MessageStatus.FAILED });
    const result = await run(
      withStack('recover', '--topic', 'order.created', '--health', join(hooks, 'down.mjs')),
      { clients: c },
    );
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('UNHEALTHY: inventory down for order.created');
    expect((await storedMessage(fixture, 'm-1'))?.status).toBe('FAILED');
  });

  it('exits 2 for a hook module without checkHealth, and for a topic the outbox does not have', async () => {
    const noHook = await run(
      withStack('recover', '--topic', 'order.created', '--health', join(hooks, 'none.mjs')),
      { clients: clients() },
    );
    expect(noHook.code).toBe(2);
    expect(noHook.stderr).toContain('exports no checkHealth(topic, context) function');

    const badTopic = await run(withStack('recover', '--topic', 'nope'), { clients: clients() });
    expect(badTopic.code).toBe(2);
    expect(badTopic.stderr).toContain(
      '--topic is not a topic of the outbox in OutboxExample (order.created, order.cancelled)',
    );
  });

  it('replays, redrives, waits until everything is CONFIRMED and exits 0', async () => {
    const flow = { sweeps: 0 };
    let pipe: ReturnType<typeof pipeline> | undefined;
    const c = clients({
      // Each pause of the wait lets the sweeper and the consumer run once.
      sleep: async (ms) => {
        fixture.clock.advance(ms);
        if (pipe === undefined) return;
        flow.sweeps += 1;
        await pipe.sweepOnce();
        await pipe.deliverAll();
      },
      recoverPollIntervalMs: 1_000,
    });
    pipe = pipeline(fixture);
    // The sweeper sends only messages with ULID ids, as the library writes them.
    const FAILED_ID = '01HW0000000000000000000001';
    const DEAD_ID = '01HW0000000000000000000002';
    await storeMessage(fixture, { messageId: FAILED_ID, status: MessageStatus.FAILED });
    // A message the consumer gave up on: sent by the sweeper, then moved to the DLQ as SQS would.
    await storeMessage(fixture, { messageId: DEAD_ID, status: MessageStatus.PENDING });
    await pipe.sweepOnce();
    const [sent] = fixture.queues.receiveMessages(ORDER_QUEUE, { max: 10 });
    if (sent === undefined) throw new Error('the sweeper sent nothing');
    fixture.queues.delete(ORDER_QUEUE, sent.receiptHandle);
    fixture.queues.send(ORDER_DLQ, { body: sent.body, attributes: sent.attributes });

    const result = await run(
      withStack('recover', '--topic', 'order.created', '--health', join(hooks, 'up.mjs'), '--wait', '60'),
      { clients: c },
    );

    expect(result.stderr).not.toContain('error');
    expect(result.stdout).toContain('1. downstream  healthy: ok in OutboxExample');
    expect(result.stdout).toContain('2. replay      1 of 1 FAILED message(s) replayed');
    expect(result.stdout).toContain('3. redrive     1 dead letter(s) moved back');
    expect(result.stdout).toContain('5. result      resolved: nothing remains');
    expect(result.code).toBe(0);
    expect((await storedMessage(fixture, FAILED_ID))?.status).toBe('CONFIRMED');
    expect((await storedMessage(fixture, DEAD_ID))?.status).toBe('CONFIRMED');
    expect(flow.sweeps).toBeGreaterThan(0);
  });

  it('says the health check was skipped without a hook, and exits 1 with what remains after the wait', async () => {
    const c = clients({ recoverPollIntervalMs: 1_000 });
    await storeMessage(fixture, { messageId: 'm-failed', status: MessageStatus.FAILED });
    const result = await run(withStack('recover', '--topic', 'order.created', '--wait', '5', '--json'), {
      clients: c,
    });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      outcome: 'UNRESOLVED',
      health: { checked: false, detail: expect.stringContaining('skipped') },
      wait: { tracked: 1, confirmed: 0, timedOut: true },
      unresolved: { messages: [{ messageId: 'm-failed', status: 'PENDING', step: 'replay' }], failed: 0 },
    });
  });

  it('exits 0 at once on a clean topic', async () => {
    const result = await run(withStack('recover', '--topic', 'order.created'), { clients: clients() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('4. wait        nothing to wait for');
  });
});
