import { resolve } from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { describeAppChanges, parseStartOptions } from '../../infra/dev/local/host/start.ts';
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

describe('describeAppChanges', () => {
  const stack = (stackName: string, resources: Record<string, unknown> = {}) => ({
    stackName,
    displayName: stackName,
    dependencies: [],
    template: {
      Resources: Object.fromEntries(
        Object.entries(resources).map(([id, type]) => [
          id,
          { Type: String(type), Metadata: { 'aws:cdk:path': `${stackName}/${id}/Resource` } },
        ]),
      ),
    },
  });

  it('says what changed in an app of one stack, as it always did', () => {
    expect(
      describeAppChanges(
        { stacks: [stack('Notes', { Table: 'AWS::DynamoDB::Table' })], stackCount: 1 },
        {
          stacks: [stack('Notes', { Table: 'AWS::DynamoDB::Table', Queue: 'AWS::SQS::Queue' })],
          stackCount: 1,
        },
      ),
    ).toBe('added Queue');
  });

  it('names the stack of each change in an app of several, and the stacks added or removed', () => {
    const before = {
      stacks: [stack('Shop', { Table: 'AWS::DynamoDB::Table' }), stack('Mailroom'), stack('Gone')],
      stackCount: 3,
    };
    const after = {
      stacks: [
        stack('Shop', { Table: 'AWS::DynamoDB::Table' }),
        stack('Mailroom', { Queue: 'AWS::SQS::Queue' }),
        stack('Loyalty'),
      ],
      stackCount: 3,
    };
    expect(describeAppChanges(before, after)).toBe(
      'Mailroom: added Queue; stack Loyalty added; stack Gone removed',
    );
    expect(describeAppChanges(before, before)).toBe('');
  });
});
