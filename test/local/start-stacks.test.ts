/**
 * `npm start` on a CDK app of two stacks (test/local/fixtures/mail-app, with its own plug-in), as a user runs it:
 * every stack synthesized from cdk.json, deployed and listed once each, every route served on the one port, the
 * plug-in called once with every stack, a letter carried across the stacks, then Ctrl-C.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_BACKEND } from '../integration/support/backend.ts';
import { descendants, killTree, type NpmStart, startNpm } from './support/npm-start.ts';

const MAIL_APP = resolve(import.meta.dirname, 'fixtures/mail-app');
const STARTUP_TIMEOUT_MS = 150_000;

let npm: NpmStart;

beforeAll(async () => {
  npm = await startNpm(
    ['--backend', TEST_BACKEND, '--no-hot-reload', '--project', MAIL_APP, '--plugin', 'mail-plugin.ts'],
    { timeoutMs: STARTUP_TIMEOUT_MS },
  );
}, STARTUP_TIMEOUT_MS + 10_000);

afterAll(async () => {
  if (npm?.child.exitCode === null && npm.child.signalCode === null) {
    killTree([...descendants(npm.child.pid ?? -1), npm.child.pid ?? -1]);
    await npm.exited;
  }
});

const lines = (): string[] => npm.output().split('\n');

describe('npm start on an app of two stacks', () => {
  it('lists each stack it deployed, in dependency order, and every stack’s routes and pollers', () => {
    expect(lines().filter((line) => line.startsWith('  stack '))).toEqual([
      '  stack      Shop-local (created)',
      '  stack      Mailroom-local (created)',
    ]);
    expect(npm.output()).toMatch(/GET\s+\/receipts\/\{letterId\} → Shop\/Lookup/);
    expect(npm.output()).toMatch(/POST\s+\/letters → Mailroom\/Post/);
    expect(npm.output()).toMatch(/Mailroom\/Courier ← Mailroom-local-Letters\S+ queue: batch 5/);
    expect(npm.output()).toMatch(/Shop\/Tally ← Shop-local-Receipts\S+ stream/);
    expect(npm.output()).toMatch(/functions\s+Node v24\.\d+\.\d+, in a process of their own/);
  });

  it('calls the plug-in once, with the runtime of every stack', () => {
    const hints = lines().filter((line) => line.includes('post a letter:'));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain(`curl -s -X POST ${npm.apiUrl}/letters`);
    expect(hints[0]).toMatch(/\(stacks Shop-local, Mailroom-local; [1-9]\d* outputs\)/);
  });

  it('carries a letter from the mailroom’s route to the shop’s receipts, on the one port', async () => {
    const posted = await fetch(`${npm.apiUrl}/letters`, { method: 'POST', body: '{"letterId":"l-npm"}' });
    expect(posted.status).toBe(202);
    await expect
      .poll(async () => (await fetch(`${npm.apiUrl}/receipts/l-npm`)).status, { timeout: 30_000 })
      .toBe(200);
    expect(await (await fetch(`${npm.apiUrl}/receipts/l-npm`)).json()).toMatchObject({ deliveries: 1 });
  });

  it('stops everything on SIGINT and exits 0', async () => {
    npm.child.kill('SIGINT');
    expect(await npm.exited).toEqual({ code: 0, signal: null });
    expect(npm.output()).toMatch(/^stopped\.$/m);
  });
});
