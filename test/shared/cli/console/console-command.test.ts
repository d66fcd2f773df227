/** `outbox console` as the CLI runs it: the outbox found in its stack, one URL printed, served until stopped. */
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../../shared/cli/run-cli.ts';
import { adminFixture } from '../../admin/admin-fixture.ts';
import { cloudFormationWith, run, STACK } from '../cli-fixture.ts';

let restore: (() => void) | undefined;

afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('outbox console', () => {
  it('refuses a port that is not one with exit code 2', async () => {
    const answer = await run(['--stack', STACK, 'console', '--port', '70000']);

    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/--port must be a port number from 0 to 65535/);
  });

  it('prints one sign-in URL on 127.0.0.1, serves the console there, and exits 0 when stopped', async () => {
    const fixture = adminFixture();
    const { mock, client } = cloudFormationWith();
    restore = () => mock.restore();
    const stop = new AbortController();
    let stdout = '';
    let stderr = '';

    const exit = runCli(['--stack', STACK, 'console', '--port', '0'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { AWS_REGION: 'us-east-1' },
      clients: { cloudFormation: client, adminDeps: () => fixture.deps, consoleStop: stop.signal },
    });
    await expect.poll(() => stdout, { timeout: 20_000 }).toMatch(/\n$/);

    const url = stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+$/);
    expect(stdout.split('\n').filter((line) => line !== '')).toHaveLength(1);
    expect(stderr).toContain(`outbox console for ${STACK}`);
    const signIn = await fetch(url, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const session = await fetch(new URL('/api/session', url), { headers: { cookie } });
    expect(await session.json()).toMatchObject({
      stackName: STACK,
      topics: ['order.cancelled', 'order.created', 'payment.captured'],
    });

    stop.abort();
    expect(await exit).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });
});
