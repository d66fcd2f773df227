/**
 * `npm start`: the whole example on this machine without AWS. Starts the local runtime, prints what runs
 * where, keeps a live count of orders and messages, and shuts everything down (moto included) on Ctrl-C.
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { tableOutputName } from '../topology.ts';
import { type LocalRuntime, startLocalRuntime } from './runtime.ts';
import { DEFAULT_STOCK } from './seed-stock.ts';
import { formatStatusCounts, readStatusCounts } from './status-counts.ts';

/** Settings of the CLI, from flags and the environment. */
export interface StartOptions {
  readonly port: number;
  readonly seed: boolean;
  readonly endpoint: string | undefined;
  readonly refreshMs: number;
}

/** An environment variable the CLI reads is malformed. */
export class StartOptionsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A status line that redraws in place on a terminal and prints plain lines (on change) otherwise. */
export interface StatusConsole {
  /** Prints a log line above the status line. */
  log(line: string): void;
  /** Shows the current status. */
  status(text: string): void;
  /** Leaves the status line as it is and moves to a new line. */
  end(): void;
}

/** The CLI's options from `argv` and `env` (PORT, AWS_ENDPOINT_URL); bad values fail with the setting's name. */
export function parseStartOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): StartOptions {
  const program = new Command()
    .name('npm start --')
    .description('Run the outbox example locally: moto, the deployed template, the handlers, the REST API.')
    .option('-p, --port <port>', 'port of the REST API on 127.0.0.1 (env PORT)', parsePort, portFromEnv(env))
    .option(
      '--endpoint <url>',
      'use this emulator instead of a fresh moto (env AWS_ENDPOINT_URL)',
      env.AWS_ENDPOINT_URL,
    )
    .option('--no-seed', `do not put starting stock (${DEFAULT_STOCK.map((s) => s.sku).join(', ')})`)
    .option('--refresh <ms>', 'how often the live count refreshes', parsePositive, 1_500)
    .exitOverride()
    .parse([...argv], { from: 'user' });
  const options = program.opts<{ port: number; endpoint?: string; seed: boolean; refresh: number }>();
  return {
    port: options.port,
    seed: options.seed,
    endpoint: options.endpoint === '' ? undefined : options.endpoint,
    refreshMs: options.refresh,
  };
}

/** The banner: what runs where, how to try it, which pollers run with which settings. */
export function describeRuntime(runtime: LocalRuntime, seeded: boolean): string[] {
  const api = runtime.apiUrl;
  const emulator =
    runtime.emulatorPid === undefined
      ? `${runtime.endpoint} (external)`
      : `${runtime.endpoint} (moto, pid ${runtime.emulatorPid})`;
  const { emulatorMs, synthMs, deployMs, totalMs } = runtime.timings;
  return [
    `outbox example running locally, ready in ${seconds(totalMs)} (synthesis ${seconds(synthMs)} while the ` +
      `emulator booted, emulator answering at ${seconds(emulatorMs)}, deploy ${seconds(deployMs)})`,
    `  emulator   ${emulator}, stack ${runtime.stackName}`,
    `  REST API   ${api}`,
    ...(seeded ? [`  stock      ${DEFAULT_STOCK.map((s) => `${s.sku}=${s.available}`).join(', ')}`] : []),
    '  pollers',
    ...[...runtime.pollers, ...runtime.schedules].map((poller) => `    ${poller.description}`),
    '',
    '  try it:',
    `    curl -s -X POST ${api}/orders -H 'content-type: application/json' \\`,
    `      -d '{"customerId":"c-1","items":[{"sku":"SKU-APPLE","quantity":2}]}'`,
    `    curl -s ${api}/orders/<orderId>`,
    `    curl -s ${api}/inventory/SKU-APPLE`,
    '',
    '  Ctrl-C stops everything.',
    '',
  ];
}

/**
 * A {@link StatusConsole} on `stream`. On a terminal it also takes over `stream.write`, so that output from
 * elsewhere (the handlers' Powertools loggers write JSON lines to stdout) lands above the status line
 * instead of being glued to it.
 */
export function statusConsole(stream: NodeJS.WriteStream): StatusConsole {
  const tty = stream.isTTY === true;
  let shown: string | undefined;
  const write = stream.write.bind(stream) as (chunk: string) => boolean;
  if (tty) {
    const foreign = (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
      const done = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
      const result = write(`\r\x1b[2K${text}${text.endsWith('\n') ? '' : '\n'}${shown ?? ''}`);
      done?.();
      return result;
    };
    stream.write = foreign as NodeJS.WriteStream['write'];
  }
  return {
    log(line) {
      // On a terminal, clear the status line, print the log line, and redraw the status below it.
      if (tty && shown !== undefined) write(`\r\x1b[2K${line}\n${shown}`);
      else write(`${line}\n`);
    },
    status(text) {
      if (tty) write(`\r\x1b[2K${text}`);
      else if (text !== shown) write(`${text}\n`);
      shown = text;
    },
    end() {
      if (tty && shown !== undefined) write('\n');
      shown = undefined;
    },
  };
}

async function main(): Promise<void> {
  // The AWS SDK warns once per process that Node 20 support ends in 2027; the deployed functions run on
  // nodejs22.x, so locally it is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const options = parseStartOptions(process.argv.slice(2), process.env);
  const out = statusConsole(process.stdout);
  out.log('starting moto, synthesizing and deploying the app…');
  const runtime = await startLocalRuntime({
    port: options.port,
    seed: options.seed,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    log: (line) => out.log(line),
  });

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      // A second Ctrl-C: leave now; the exit handler still kills moto.
      process.exit(130);
    }
    stopping = true;
    out.end();
    out.log(`${signal}: stopping pollers, API and emulator…`);
    runtime.stop().then(
      () => {
        out.log('stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        out.log(`stop failed: ${describeError(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  for (const line of describeRuntime(runtime, options.seed)) out.log(line);
  const counter = new DynamoDBClient(runtime.clientConfig);
  const tables = {
    orders: runtime.outputs[tableOutputName('orders')] ?? '',
    outbox: runtime.outputs[tableOutputName('outbox')] ?? '',
  };
  const refresh = async (): Promise<void> => {
    if (stopping) return;
    try {
      out.status(formatStatusCounts(await readStatusCounts(counter, tables)));
    } catch (error) {
      if (!stopping) out.status(`(counts unavailable: ${describeError(error)})`);
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs);
  timer.unref();
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError(`port must be an integer from 0 to 65535, got "${value}"`);
  }
  return port;
}

function parsePositive(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0)
    throw new InvalidArgumentError(`must be a positive integer, got "${value}"`);
  return number;
}

function portFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  if (env.PORT === undefined || env.PORT === '') return 3000;
  try {
    return parsePort(env.PORT);
  } catch (cause) {
    throw new StartOptionsError(`PORT: ${(cause as Error).message}`, { cause });
  }
}

function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && parts.length < 5) {
    parts.push(`${current.name}: ${current.message}`);
    current = current.cause;
  }
  return parts.length === 0 ? String(error) : parts.join('\n  caused by ');
}

// Run only as the entry point, so tests can import the helpers above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    // commander has already printed its message (or the help) for a bad flag or --help.
    if (error instanceof CommanderError) process.exit(error.exitCode);
    process.stderr.write(`\nnpm start failed: ${describeError(error)}\n`);
    process.exit(1);
  });
}
