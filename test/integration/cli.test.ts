import { appendFileSync } from 'node:fs';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../infra/dev/local/host/runtime.ts';
import { runCli } from '../../shared/cli/run-cli.ts';
import { relayDeps } from '../../shared/lambda/relay-handler.ts';
import { relayStreamBatch } from '../../shared/lambda/relay-stream-batch.ts';
import { sweeperDeps } from '../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../shared/message/envelope.ts';
import type { MessagePublisher } from '../../shared/relay/message-publisher.ts';
import { DEFAULT_RETRY_POLICY } from '../../shared/retry/retry-policy.ts';
import { DEFAULT_SWEEPER_SETTINGS, sweep } from '../../shared/sweeper/sweep.ts';
import {
  placeOrder,
  request,
  scanAll,
  startRuntime,
  stockOf,
  waitFor,
  waitForMessageStatus,
} from './support.ts';

/** Orders whose message SQS rejects while they are in here. */
const rejected = new Set<string>();

function faultyPublisher(publisher: MessagePublisher): MessagePublisher {
  return {
    publishBatch: async (queueUrl: string, messages: readonly Envelope[]) => {
      const refused = messages.filter((m) => rejected.has(m.aggregateId));
      const result = await publisher.publishBatch(
        queueUrl,
        messages.filter((m) => !refused.includes(m)),
      );
      return {
        sent: result.sent,
        failed: [
          ...result.failed,
          ...refused.map((m) => ({ messageId: m.messageId, error: 'InternalError: rejected by the test' })),
        ],
      };
    },
  };
}

const quiet = { info: () => {}, warn: () => {} };
let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startRuntime({
    handlers: {
      // The test runs the sweeper itself, when it wants a replayed message sent.
      'Outbox/Sweeper': () => async () => ({}),
      // One attempt only: a rejected send makes the message FAILED at once.
      'Outbox/Relay': (_base, env) => {
        const deps = relayDeps({
          ...env,
          RETRY_POLICIES: JSON.stringify({ 'order.created': { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 } }),
        });
        const relay = { ...deps, publisher: faultyPublisher(deps.publisher) };
        return (event) => relayStreamBatch(event as DynamoDBStreamEvent, relay, quiet);
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
});

/** Runs `outbox <argv>` against the runtime's emulator, as `npm run outbox` would with AWS_ENDPOINT_URL set. */
async function outbox(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const { credentials, region } = runtime.clientConfig;
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {
      AWS_ENDPOINT_URL: runtime.endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
  });
  // Set OUTBOX_CLI_TRANSCRIPT to a file to record the session (the README's "Operating it" shows one).
  const transcript = process.env.OUTBOX_CLI_TRANSCRIPT;
  if (transcript) appendFileSync(transcript, `$ npm run outbox -- ${argv.join(' ')}\n${stdout}${stderr}\n`);
  return { code, stdout, stderr };
}

/** One sweeper round now, as the scheduled sweeper would run it. */
async function sweepOnce(): Promise<void> {
  let rounds = 1;
  await sweep({
    ...sweeperDeps(runtime.env['Outbox/Sweeper'] ?? {}),
    owner: `cli-test-${Date.now()}`,
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...DEFAULT_SWEEPER_SETTINGS, stopBeforeMs: 0 },
  });
}

async function messageOf(orderId: string): Promise<Record<string, unknown>> {
  const item = (await scanAll(runtime, 'outbox')).find((m) => m.aggregateId === orderId);
  if (item === undefined) throw new Error(`no outbox message for ${orderId}`);
  return item;
}

describe('outbox CLI on the local stack (moto)', () => {
  let failedId: string;

  it('finds a FAILED message through stats and list, on the stack npm start deploys', async () => {
    rejected.add('order-cli-failed');
    await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 1 }], 'order-cli-failed');
    const failed = await waitFor(async () => {
      const item = await messageOf('order-cli-failed');
      return item.status === 'FAILED' ? item : undefined;
    });
    failedId = String(failed.messageId);

    expect((await outbox('stats')).stdout).toMatch(/order\.created/);
    const stats = await outbox('stats', '--json');
    expect(stats.code).toBe(0);
    const counts = JSON.parse(stats.stdout);
    expect(counts.topics['order.created'].FAILED).toBe(1);
    expect(counts.deadLetterQueues).toEqual([
      expect.objectContaining({ topics: ['order.created', 'order.cancelled'], messages: 0 }),
    ]);

    const list = await outbox('list', '--status', 'FAILED', '--json');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).items).toEqual([
      expect.objectContaining({ messageId: failedId, status: 'FAILED', aggregateId: 'order-cli-failed' }),
    ]);

    // The same, as an operator reads it: tables.
    const table = await outbox('list', '--status', 'FAILED');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${failedId} +FAILED +order\\.created +order-cli-failed`));
    const shown = await outbox('show', failedId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('InternalError: rejected by the test');
  });

  it('replays it: the next sweep sends it and it is CONFIRMED, with the replay in its history', async () => {
    rejected.delete('order-cli-failed');
    const replay = await outbox('replay', failedId, '--reason', 'inventory fixed');
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain(
      `replayed ${failedId} (order.created, order-cli-failed): FAILED → PENDING`,
    );

    await sweepOnce();
    await waitForMessageStatus(runtime, 'order-cli-failed', 'CONFIRMED');

    expect((await outbox('show', failedId)).stdout).toMatch(/REPLAYED/);
    const show = await outbox('show', failedId, '--json');
    expect(show.code).toBe(0);
    const details = JSON.parse(show.stdout);
    expect(details.message.status).toBe('CONFIRMED');
    expect(details.history).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'REPLAYED',
          by: expect.stringMatching(/^local:/),
          reason: 'inventory fixed',
        }),
      ]),
    );
    expect(details.audit).toEqual([expect.objectContaining({ action: 'REPLAY', reason: 'inventory fixed' })]);

    // Replaying a CONFIRMED message is refused: wrong status, exit code 4.
    expect((await outbox('replay', failedId, '--reason', 'again')).code).toBe(4);
  });

  it('skips a FAILED create its cancel waits behind: the consumer moves past it and applies the cancel, once', async () => {
    const orderId = 'order-cli-gap';
    rejected.add(orderId);
    const { messageId: createId } = await placeOrder(runtime, [{ sku: 'SKU-APPLE', quantity: 1 }], orderId);
    await waitForMessageStatus(runtime, orderId, 'FAILED');
    rejected.delete(orderId);
    const cancelled = await request(runtime, `POST /orders/${orderId}/cancel`);
    const cancelId: string = cancelled.body.messageId;
    // The consumer has the cancel, seq 2, and holds it parked: seq 1 never arrived.
    await waitFor(async () =>
      (await scanAll(runtime, 'inbox')).some((row) => row.parkedMessageId === cancelId) ? true : undefined,
    );
    // And the relay has recorded its send (it does so as it sends; this only rules out a slow machine).
    await waitFor(async () =>
      (await scanAll(runtime, 'outbox')).some((m) => m.messageId === cancelId && m.status === 'SENT')
        ? true
        : undefined,
    );
    const stock = await stockOf(runtime, 'SKU-APPLE');

    const heldByConsumer = await outbox(
      'skip',
      '--order-key',
      `order#${orderId}`,
      '--seq',
      '2',
      '--reason',
      'x',
    );
    const skip = await outbox(
      'skip',
      '--order-key',
      `order#${orderId}`,
      '--seq',
      '1',
      '--reason',
      'order withdrawn by the customer',
    );
    await sweepOnce();
    const order = await waitFor(async () => {
      const body = (await request(runtime, `GET /orders/${orderId}`)).body;
      return body.messages[1]?.status === 'CONFIRMED' ? body : undefined;
    });
    const show = await outbox('show', createId);

    // The cancel itself cannot be skipped: the consumer holds it (SENT), a 409 refusal, exit code 4.
    expect(heldByConsumer.code).toBe(4);
    expect(heldByConsumer.stderr).toContain(
      `message ${cancelId} is SENT; skip needs PENDING or FAILED or CANCELLED`,
    );
    expect(skip.code).toBe(0);
    expect(skip.stdout).toContain(`skipped order#${orderId} seq 1 (message ${createId}, order.created)`);
    expect(skip.stdout).toMatch(/message {3}FAILED → CANCELLED\n/);
    expect(skip.stdout).toMatch(/consumer {2}\S+: cursor none → 1\n/);
    expect(skip.stdout).toContain(
      `next      seq 2 (message ${cancelId}) SENT → PENDING: the sweeper sends it again`,
    );
    // The create was never applied, so the cancel finds nothing to release; the stock did not move.
    expect(order.messages.map((m: { status: string; outcome?: string }) => [m.status, m.outcome])).toEqual([
      ['CANCELLED', undefined],
      ['CONFIRMED', 'NOTHING_TO_RELEASE'],
    ]);
    expect(await stockOf(runtime, 'SKU-APPLE')).toBe(stock);
    expect(show.stdout).toMatch(
      /CANCELLED +FAILED → CANCELLED +local:\S+ +skipped order#order-cli-gap seq 1: /,
    );
    expect(show.stdout).toMatch(/SKIP +local:\S+ +order withdrawn by the customer/);
  });

  it('recovers a clean topic with the example health hook and exits 0', async () => {
    const recover = await outbox(
      'recover',
      '--topic',
      'order.created',
      '--health',
      'infra/stacks/health-check.ts',
      '--wait',
      '5',
    );
    expect(recover.stderr).not.toContain('error');
    expect(recover.stdout).toContain('1. downstream  healthy: inventory table');
    expect(recover.stdout).toContain('5. result      resolved: nothing remains');
    expect(recover.code).toBe(0);
  });

  it('exits 2 with a message naming a bad argument', async () => {
    const result = await outbox('list', '--status', 'FAILED', '--limit', '0');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--limit must be a whole number above 0, got 0');
  });
});
