/**
 * Restart keeps the data: `npm start` against an emulator that was already running (AWS_ENDPOINT_URL, here a
 * moto this test starts), orders posted, the process killed with SIGKILL while messages are in flight, and
 * started again — every order reaches CONFIRMED and the stock changes exactly once per order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { emulatorClientConfig } from '../../infra/dev/local/backends/emulator-config.ts';
import { type MotoServer, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import { type NpmStart, RECOVERY_BOUND_MS, startNpm } from '../local/support/npm-start.ts';
import { describeOnMoto, TEST_BACKEND } from './support/backend.ts';

/** Why this file runs only on moto. */
const NEEDS_MOTO =
  "an emulator that outlives npm start is deployed to through CloudFormation's CreateStack and UpdateStack, which among the local backends only moto serves; the embedded backend keeps its data across a SIGKILL with --data-dir, tested in test/local/data-dir.test.ts";

const STARTUP_TIMEOUT_MS = 150_000;
const ORDERS = 12;

let moto: MotoServer;
let stateDir: string;
const started: NpmStart[] = [];

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  moto = await startMotoServer();
  stateDir = mkdtempSync(join(tmpdir(), 'restart-state-'));
});

afterAll(async () => {
  for (const { child } of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await moto?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** Starts what `npm start` runs, with the example's plug-in, against the test's moto and waits until it is ready. */
async function startCli(): Promise<NpmStart> {
  // The runtime itself, not npm in front of it: a SIGKILL must hit the process that holds the work.
  const cli = await startNpm(['--state-file', join(stateDir, 'poller-state.json')], {
    env: { AWS_ENDPOINT_URL: moto.endpoint },
    timeoutMs: STARTUP_TIMEOUT_MS,
    withoutNpm: true,
  });
  started.push(cli);
  return cli;
}

/** The example's stacks, as npm start deploys them. */
const STACKS = ['OutboxOrders-local', 'OutboxInventory-local', 'OutboxLoyalty-local'] as const;

/** The outputs of the example's stacks (their names are unique across them), read from the emulator itself. */
async function stackOutputs(): Promise<Record<string, string>> {
  const client = new CloudFormationClient(emulatorClientConfig(moto.endpoint));
  const outputs: Record<string, string> = {};
  for (const StackName of STACKS) {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName }));
    for (const output of Stacks?.[0]?.Outputs ?? [])
      outputs[output.OutputKey ?? ''] = output.OutputValue ?? '';
  }
  client.destroy();
  return outputs;
}

/** Every item of a table, straight from the emulator (no runtime needed). */
async function scanTable(tableName: string): Promise<Record<string, { S?: string; N?: string }>[]> {
  const client = new DynamoDBClient(emulatorClientConfig(moto.endpoint));
  const items: Record<string, { S?: string; N?: string }>[] = [];
  for await (const page of paginateScan({ client }, { TableName: tableName, ConsistentRead: true })) {
    items.push(...((page.Items ?? []) as Record<string, { S?: string; N?: string }>[]));
  }
  client.destroy();
  return items;
}

async function available(apiUrl: string, sku: string): Promise<number> {
  const response = await fetch(`${apiUrl}/inventory/${sku}`);
  return ((await response.json()) as { available: number }).available;
}

describeOnMoto(NEEDS_MOTO)('npm start against an emulator that outlives it', () => {
  const orderIds = Array.from({ length: ORDERS }, (_, index) => `restart-${index + 1}`);
  const quantity = (index: number): number => (index % 3) + 1;
  let statusesAtKill: string[] = [];

  it('takes orders, then dies with SIGKILL while their messages are in flight', async () => {
    const first = await startCli();
    for (const stack of STACKS) expect(first.output()).toMatch(new RegExp(`stack\\s+${stack} \\(created\\)`));
    expect(first.output()).toContain('stock      SKU-APPLE=100');
    const responses = await Promise.all(
      orderIds.map((orderId, index) =>
        fetch(`${first.apiUrl}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            orderId,
            customerId: 'c-restart',
            items: [{ sku: 'SKU-APPLE', quantity: quantity(index) }],
          }),
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(orderIds.map(() => 201));

    // Killed once the relay has marked every message SENT, while the consumer gathers them for up to a second (its
    // batching window) before it applies them: in flight in the queue and in the consumer. (A kill during the
    // relay's own send, between its mark and SQS's answer, is finished too, by reconciliation once the
    // confirmation deadline has passed: the next test allows for that bound, but it costs the suite 5 minutes.)
    const outputs = await stackOutputs();
    await expect
      .poll(
        async () =>
          (await scanTable(outputs.outboxTableName ?? '')).filter(
            (message) => message.status?.S === 'PENDING',
          ).length,
        { timeout: 20_000, interval: 50 },
      )
      .toBe(0);
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const outbox = await scanTable(outputs.outboxTableName ?? '');
    statusesAtKill = outbox.map((message) => message.status?.S ?? '');
    // One delivery per subscriber, inventory's and loyalty's.
    expect(statusesAtKill).toHaveLength(ORDERS * 2);
    expect(statusesAtKill.filter((status) => status !== 'CONFIRMED').length).toBeGreaterThan(0);
  });

  it(
    'starts again on the same stack, keeps every row and finishes what was in flight, once',
    async () => {
      const second = await startCli();
      for (const stack of STACKS) {
        expect(second.output()).toMatch(new RegExp(`stack\\s+${stack} \\(unchanged, kept with its data\\)`));
      }
      expect(second.output()).toContain('stock      kept as it was: SKU-APPLE');

      const outputs = await stackOutputs();
      // What was in flight finishes within the pipeline's own bound. Usually in seconds (the stream resumes at its
      // checkpoint, the queue poller hands back the killed consumer's messages), but a kill that landed between the
      // relay's SENT mark and its send leaves a message SENT and never sent: the sweeper resends it once the
      // confirmation deadline (5 minutes by default) has passed, at its next run (every minute).
      await expect
        .poll(
          async () => {
            const outbox = await scanTable(outputs.outboxTableName ?? '');
            return outbox
              .filter((message) => message.status?.S !== 'CONFIRMED')
              .map((message) => `${message.messageId?.S} ${message.status?.S} sentAt=${message.sentAt?.S}`);
          },
          { timeout: RECOVERY_BOUND_MS, interval: 500 },
        )
        .toEqual([]);

      const ordered = orderIds.reduce((sum, _orderId, index) => sum + quantity(index), 0);
      expect(await available(second.apiUrl, 'SKU-APPLE')).toBe(100 - ordered);
      const orders = await scanTable(outputs.ordersTableName ?? '');
      expect(orders.map((order) => order.orderId?.S).sort()).toEqual([...orderIds].sort());
      // Each subscriber applied each order once, in its own inbox.
      const inventoryInbox = await scanTable(outputs.inventoryInboxTableName ?? '');
      expect(inventoryInbox.filter((row) => row.outcome?.S === 'APPLIED')).toHaveLength(ORDERS);
      const loyaltyInbox = await scanTable(outputs.loyaltyInboxTableName ?? '');
      expect(loyaltyInbox.filter((row) => row.outcome?.S === 'AWARDED')).toHaveLength(ORDERS);
      const points = await (await fetch(`${second.apiUrl}/loyalty/c-restart`)).json();
      expect(points).toEqual({ customerId: 'c-restart', points: ordered * 10 });

      second.child.kill('SIGINT');
      expect(await second.exited).toEqual({ code: 0, signal: null });
    },
    RECOVERY_BOUND_MS + STARTUP_TIMEOUT_MS,
  );
});
