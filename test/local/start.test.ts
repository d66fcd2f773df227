/**
 * End to end: `npm start` as a user runs it (infra/dev/local/host/start.ts with the example's plug-in, without AWS
 * credentials) on the test backend, an order taken through to CONFIRMED over HTTP, the operator's command it
 * prints run as printed, then Ctrl-C (SIGINT) and no emulator left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersHttp } from '../../infra/dev/local/backends/moto-server.ts';
import { runCli } from '../../shared/cli/run-cli.ts';
import { TEST_BACKEND } from '../integration/support/backend.ts';
import { isAlive, type NpmStart, startNpm } from './support/npm-start.ts';

const STARTUP_TIMEOUT_MS = 150_000;

let npm: NpmStart;
let apiUrl: string;
let motoPid: number;
let motoEndpoint: string;

/** Everything `npm start` printed so far. */
const output = (): string => npm.output();

beforeAll(async () => {
  npm = await startNpm(['--backend', TEST_BACKEND, '--no-hot-reload'], { timeoutMs: STARTUP_TIMEOUT_MS });
  apiUrl = /REST API\s+(\S+)/.exec(output())?.[1] ?? '';
  const backend = /backend\s+\S+ at (http:\/\/\S+)(?: \(pid (\d+)\))?/.exec(output());
  motoEndpoint = backend?.[1] ?? '';
  motoPid = backend?.[2] === undefined ? -1 : Number(backend[2]);
  expect(apiUrl).toBe(`http://127.0.0.1:${npm.port}`);
}, STARTUP_TIMEOUT_MS + 10_000);

afterAll(async () => {
  // Whatever happened above, leave no process behind.
  if (npm?.child.exitCode === null && npm.child.signalCode === null) {
    npm.child.kill('SIGKILL');
    await npm.exited;
  }
  if (motoPid > 0 && isAlive(motoPid)) process.kill(motoPid, 'SIGKILL');
});

interface OrderPage {
  readonly orderId: string;
  readonly messages: readonly { readonly status: string }[];
}

describe('npm start', () => {
  it('says first which backend runs and how to get the full-fidelity one', () => {
    const first = output()
      .split('\n')
      .find((line) => line.startsWith('backend: '));
    expect(first).toBe(
      TEST_BACKEND === 'moto'
        ? 'backend: moto, fresh for this run (full fidelity); set AWS_ENDPOINT_URL to use an emulator you ' +
            'already run and keep its data between runs'
        : "backend: embedded, in memory; for full fidelity install moto (pip install 'moto[server]') or point " +
            'AWS_ENDPOINT_URL at an emulator (LocalStack, moto)',
    );
  });

  it('runs the functions on the Node.js their runtime names, in a process of their own', () => {
    expect(output()).toMatch(/functions\s+Node v24\.\d+\.\d+, in a process of their own/);
  });

  it('prints the command to operate it, and that command works as printed', async () => {
    const printed = /AWS_ENDPOINT_URL=(\S+) npm run outbox -- stats/.exec(output());
    expect(printed).not.toBeNull();
    let stdout = '';
    const code = await runCli(['stats'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true, isTTY: false },
      env: { AWS_ENDPOINT_URL: printed?.[1] },
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/order\.created/);
    expect(output()).toContain(`npm run outbox -- call GET /inventory/SKU-APPLE --url ${apiUrl}`);
  });

  it('answers outbox call with the URL it prints and nothing else: no region, no credentials', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['call', 'GET', '/inventory/SKU-APPLE', '--url', apiUrl], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text), isTTY: false },
      // Not even HOME: no profile, no region, no credentials to find.
      env: { PATH: process.env.PATH },
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/^HTTP 200/) });
    expect(JSON.parse(stdout)).toMatchObject({ sku: 'SKU-APPLE' });
  });

  it('prints the stacks, routes, pollers and schedules the templates describe, the stock and how to try it', () => {
    expect(output()).toMatch(/stack\s+OutboxOrders-local \(created\)/);
    expect(output()).toMatch(/stack\s+OutboxInventory-local \(created\)/);
    expect(output()).toMatch(/stack\s+OutboxLoyalty-local \(created\)/);
    expect(output()).toMatch(/POST\s+\/orders → OutboxOrders\/CreateOrder/);
    expect(output()).toMatch(/GET\s+\/inventory\/\{sku\} → OutboxInventory\/GetStock/);
    expect(output()).toMatch(/GET\s+\/loyalty\/\{customerId\} → OutboxLoyalty\/GetPoints/);
    expect(output()).toMatch(
      /OutboxOrders\/Outbox\/Relay ← OutboxOrders-local-OutboxTable\S+ stream: batch 100, window 0s/,
    );
    expect(output()).toMatch(/OutboxOrders\/Outbox\/Receipts ← OutboxOrders-Outbox-receipts queue: batch 10/);
    expect(output()).toMatch(
      /OutboxInventory\/Inventory\/Consumer ← OutboxOrders-Outbox-inventory queue: batch 10/,
    );
    expect(output()).toMatch(
      /OutboxLoyalty\/Loyalty\/Consumer ← OutboxOrders-Outbox-loyalty queue: batch 10/,
    );
    expect(output()).toMatch(
      /OutboxOrders\/Outbox\/Sweeper ← schedule OutboxOrders\/Outbox\/SweeperSchedule: rate\(1 minute\)/,
    );
    expect(output()).toContain(
      'stock      SKU-APPLE=100, SKU-BANANA=100, SKU-CHERRY=50, SKU-DATE=10, SKU-EMPTY=0',
    );
    expect(output()).toContain('curl -s -X POST');
    if (TEST_BACKEND === 'moto') expect(isAlive(motoPid)).toBe(true);
  });

  it('takes an order through to CONFIRMED at both subscribers, reduces the stock, awards the points and counts it on the status line', async () => {
    const before = (await (await fetch(`${apiUrl}/inventory/SKU-APPLE`)).json()) as { available: number };
    const created = await fetch(`${apiUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'c-e2e', items: [{ sku: 'SKU-APPLE', quantity: 3 }] }),
    });
    expect(created.status).toBe(201);
    const { orderId, messageId } = (await created.json()) as { orderId: string; messageId: string };
    expect(messageId).toBeTruthy();

    await expect
      .poll(
        async () => {
          const page = (await (await fetch(`${apiUrl}/orders/${orderId}`)).json()) as OrderPage;
          return page.messages[0]?.status;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe('CONFIRMED');
    const after = (await (await fetch(`${apiUrl}/inventory/SKU-APPLE`)).json()) as {
      sku: string;
      available: number;
    };
    expect(after).toEqual({ sku: 'SKU-APPLE', available: before.available - 3 });
    expect(await (await fetch(`${apiUrl}/loyalty/c-e2e`)).json()).toEqual({
      customerId: 'c-e2e',
      points: 30,
    });
    await expect.poll(output, { timeout: 5_000 }).toMatch(/orders 1 · pending 0 · sent 0 · confirmed 1/);
  });

  it('stops everything on SIGINT and exits 0, leaving no emulator behind', async () => {
    npm.child.kill('SIGINT');
    // Exit code 0 only when everything stopped in order before the stop's deadline (a forced stop exits 1).
    expect(await npm.exited).toEqual({ code: 0, signal: null });
    expect(output()).toMatch(/^stopped\.$/m);
    if (motoPid > 0) expect(isAlive(motoPid)).toBe(false);
    expect(await answersHttp(motoEndpoint)).toBe(false);
    expect(await answersHttp(apiUrl)).toBe(false);
  });
});
