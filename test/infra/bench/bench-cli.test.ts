import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BENCH_SECTIONS } from '../../../infra/dev/bench/run-bench.ts';

describe('npm run bench', () => {
  it('runs every section at the tiny size and prints one table each, with its targets', () => {
    const run = spawnSync('npx', ['tsx', 'infra/dev/bench/cli.ts', '--size', 'tiny'], {
      encoding: 'utf8',
      timeout: 240_000,
    });

    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
    const titles = run.stdout.split('\n').filter((line) => /^\d+\. /.test(line));
    expect(titles).toHaveLength(BENCH_SECTIONS.length);
    expect(titles.map((title) => title.split('.')[0])).toEqual(
      BENCH_SECTIONS.map((_, index) => String(index + 1)),
    );
    // No placeholder section is left.
    expect(run.stdout).not.toMatch(/not measured yet/);
    // The summary names every missed target, or says none was.
    expect(run.stdout).toMatch(/every target met|targets missed:/);
  }, 300_000);

  it('refuses an unknown section by name, listing the known ones', () => {
    const run = spawnSync('npx', ['tsx', 'infra/dev/bench/cli.ts', '--only', 'relay,nope'], {
      encoding: 'utf8',
    });

    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('unknown section nope');
    expect(run.stderr).toContain(BENCH_SECTIONS.map((section) => section.name).join(', '));
  });
});
