/**
 * Stopping `npm start`: each signal a terminal, a process manager or an IDE sends — to npm, to the runtime, or to
 * the whole process group — stops the pollers, the API, the function host and the backend, prints `stopped.`,
 * and leaves no process of its tree and no listener on its port. A SIGKILL of the runtime, which no handler
 * sees, still takes its children with it. The embedded backend keeps each start quick; moto's own
 * parent-death watch is tested with the moto launcher (test/local/moto-server.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { descendants, isAlive, killTree, type NpmStart, portInUse, startNpm } from './support/npm-start.ts';

let running: { npm: NpmStart; tree: number[] } | undefined;

afterEach(() => {
  // Whatever happened, leave nothing behind.
  if (running !== undefined) killTree([...running.tree, running.npm.child.pid ?? -1]);
  running = undefined;
});

/** Starts npm start on the embedded backend and notes every process of its tree. */
async function start(): Promise<{ npm: NpmStart; tree: number[]; runtimePid: number }> {
  const npm = await startNpm(['--backend', 'embedded', '--no-seed']);
  const npmPid = npm.child.pid ?? -1;
  const tree = descendants(npmPid);
  running = { npm, tree };
  // npm's child is the runtime (the start script execs node); the function host is the runtime's child.
  const runtimePid = tree.find((pid) => descendants(pid).length > 0) ?? -1;
  expect(tree.length).toBeGreaterThanOrEqual(2);
  return { npm, tree, runtimePid };
}

/** Waits until no process of the tree is alive and the port is free; fails with what is left. */
async function expectAllGone(npm: NpmStart, tree: readonly number[]): Promise<void> {
  await expect
    .poll(
      async () => ({
        alive: [...tree, npm.child.pid ?? -1].filter(isAlive),
        port: await portInUse(npm.port),
      }),
      { timeout: 20_000, interval: 100 },
    )
    .toEqual({ alive: [], port: false });
}

describe('npm start stops on every signal, leaving no process and a free port', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('%s to the npm process', async (signal) => {
    const { npm, tree } = await start();
    process.kill(npm.child.pid ?? -1, signal);
    await expectAllGone(npm, tree);
    expect(npm.output()).toMatch(/stopping pollers, API, functions and backend…/);
    expect(npm.output()).toMatch(/^stopped\.$/m);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s to the whole process group (what Ctrl-C sends)',
    async (signal) => {
      const { npm, tree } = await start();
      process.kill(-(npm.child.pid ?? -1), signal);
      await expectAllGone(npm, tree);
      // npm relays the signal the runtime got from the group too: that copy is not a second Ctrl-C.
      expect(npm.output()).not.toMatch(/again: not waiting/);
      expect(npm.output()).toMatch(/^stopped\.$/m);
    },
  );

  it('SIGTERM to the runtime itself', async () => {
    const { npm, tree, runtimePid } = await start();
    process.kill(runtimePid, 'SIGTERM');
    await expectAllGone(npm, tree);
    expect(npm.output()).toMatch(/^stopped\.$/m);
  });

  it('SIGKILL to the runtime: its function host and backend do not outlive it', async () => {
    const { npm, tree, runtimePid } = await start();
    const children = descendants(runtimePid);
    expect(children.length).toBeGreaterThan(0);
    process.kill(runtimePid, 'SIGKILL');
    await expectAllGone(npm, tree);
  });
});
