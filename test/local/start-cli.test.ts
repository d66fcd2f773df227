import { resolve } from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseStartOptions } from '../../infra/dev/local/host/start.ts';
import { LocalRuntimeError } from '../../infra/dev/local/local-runtime-error.ts';

/** Runs `parse` with commander's own error output silenced. */
function parseQuietly(parse: () => unknown): unknown {
  const write = process.stderr.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    return parse();
  } catch (error) {
    return error;
  } finally {
    process.stderr.write = write;
  }
}

describe('parseStartOptions', () => {
  it('defaults to port 3000, the app of this directory, the backend chosen automatically, seeding and hot reload on, in memory', () => {
    expect(parseStartOptions([], {})).toEqual({
      port: 3000,
      endpoint: undefined,
      backend: undefined,
      stackName: undefined,
      projectDir: resolve('.'),
      plugin: undefined,
      stateFile: undefined,
      seed: true,
      refreshMs: 1_500,
      dataDir: undefined,
      hotReload: true,
    });
  });

  it('reads PORT and AWS_ENDPOINT_URL from the environment and lets flags override them', () => {
    const env = { PORT: '0', AWS_ENDPOINT_URL: 'http://localhost:4566' };
    expect(parseStartOptions([], env)).toMatchObject({ port: 0, endpoint: 'http://localhost:4566' });
    expect(
      parseStartOptions(
        [
          '--port',
          '8080',
          '--endpoint',
          'http://127.0.0.1:5000',
          '--backend',
          'embedded',
          '--stack',
          'Shop',
          '--project',
          'examples/shop',
          '--plugin',
          'infra/stacks/local-plugin.ts',
          '--state-file',
          '/tmp/state.json',
          '--no-seed',
          '--data-dir',
          'data',
          '--no-hot-reload',
        ],
        env,
      ),
    ).toEqual({
      port: 8080,
      endpoint: 'http://127.0.0.1:5000',
      backend: 'embedded',
      stackName: 'Shop',
      projectDir: resolve('examples/shop'),
      plugin: 'infra/stacks/local-plugin.ts',
      stateFile: '/tmp/state.json',
      seed: false,
      refreshMs: 1_500,
      dataDir: resolve('data'),
      hotReload: false,
    });
  });

  it('names the setting when PORT is malformed', () => {
    const error = parseQuietly(() => parseStartOptions([], { PORT: 'eighty' }));
    expect(error).toBeInstanceOf(LocalRuntimeError);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', message: /^PORT: port must be an integer/ });
  });

  it('refuses a backend it does not know', () => {
    const error = parseQuietly(() => parseStartOptions(['--backend', 'localstack'], {}));
    expect(error).toBeInstanceOf(CommanderError);
    expect(error).toMatchObject({ code: 'commander.invalidArgument' });
  });
});
