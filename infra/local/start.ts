/**
 * `npm start`: the project's CDK app on this machine without AWS. Says first which backend runs it, starts the
 * local runtime from the synthesized template, prints what runs where, keeps a live status line, and shuts
 * everything down (moto included) on Ctrl-C. What only one app needs (starting data, its own status line)
 * comes from a plug-in module (`--plugin`).
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { BackendKind } from './backend.ts';
import { chooseBackend, describeBackendChoice } from './choose-backend.ts';
import { LocalRuntimeError } from './local-runtime-error.ts';
import type { LocalRuntime } from './runtime.ts';
import { type LocalPlugin, loadPlugin } from './start-plugin.ts';
import { statusConsole } from './status-console.ts';
import { synthesizeApp } from './synthesize-app.ts';
import type { RouteDefinition } from './template/read-routes.ts';

/** Settings of the CLI, from flags and the environment. */
export interface StartOptions {
  readonly port: number;
  readonly endpoint: string | undefined;
  readonly backend: BackendKind | undefined;
  readonly stackName: string | undefined;
  readonly projectDir: string;
  readonly plugin: string | undefined;
  /** Where stream checkpoints are kept against an external emulator. */
  readonly stateFile: string | undefined;
  readonly seed: boolean;
  readonly refreshMs: number;
}

const DEFAULTS = { port: 3000, refreshMs: 1_500 } as const;

/**
 * The CLI's options from `argv` and `env` (PORT, AWS_ENDPOINT_URL); a bad value fails with an
 * `INVALID_OPTION` error that names the setting.
 */
export function parseStartOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): StartOptions {
  const program = new Command()
    .name('npm start --')
    .description(
      'Run the CDK app locally from its synthesized template: backend, handlers, REST API, pollers.',
    )
    .option('-p, --port <port>', 'port of the REST API on 127.0.0.1 (env PORT)', parsePort, portFromEnv(env))
    .option(
      '--endpoint <url>',
      'deploy to this emulator instead of a fresh moto (env AWS_ENDPOINT_URL)',
      env.AWS_ENDPOINT_URL,
    )
    .addOption(
      new Option(
        '--backend <kind>',
        'force a backend (default: endpoint, else moto if installed, else embedded)',
      ).choices(['moto', 'embedded', 'external']),
    )
    .option('--stack <name>', 'the stack to run when the app has several')
    .option('--project <dir>', 'the directory holding cdk.json', '.')
    .option('--plugin <module>', "the app's npm start plug-in (starting data, status line)")
    .option(
      '--state-file <path>',
      'where stream checkpoints are kept against an emulator (default .local/poller-state.json)',
    )
    .option('--no-seed', "do not run the plug-in's seed step")
    .option('--refresh <ms>', 'how often the status line refreshes', parsePositive, DEFAULTS.refreshMs)
    .exitOverride()
    .parse([...argv], { from: 'user' });
  const options = program.opts<{
    port: number;
    endpoint?: string;
    backend?: BackendKind;
    stack?: string;
    project: string;
    plugin?: string;
    stateFile?: string;
    seed: boolean;
    refresh: number;
  }>();
  return {
    port: options.port,
    endpoint: options.endpoint === '' ? undefined : options.endpoint,
    backend: options.backend,
    stackName: options.stack,
    projectDir: resolve(options.project),
    plugin: options.plugin,
    stateFile: options.stateFile === undefined ? undefined : resolve(options.stateFile),
    seed: options.seed,
    refreshMs: options.refresh,
  };
}

/** The banner: what runs where, which routes, pollers and schedules, what is not run. */
export function describeRuntime(runtime: LocalRuntime, readyMs: number): string[] {
  const { backendMs, deployMs } = runtime.timings;
  const backend =
    runtime.emulatorPid === undefined
      ? `${runtime.backend} at ${runtime.endpoint}`
      : `${runtime.backend} at ${runtime.endpoint} (pid ${runtime.emulatorPid})`;
  const deployment = {
    created: 'created',
    updated: 'updated in place, data kept',
    unchanged: 'unchanged, kept with its data',
  }[runtime.deployment];
  const section = (title: string, lines: readonly string[]): string[] =>
    lines.length === 0 ? [] : [`  ${title}`, ...lines.map((line) => `    ${line}`)];
  return [
    `running locally, ready ${seconds(readyMs)} after start (the app synthesized while the backend booted, ` +
      `answering ${seconds(backendMs)} into the runtime's start; deploy ${seconds(deployMs)})`,
    `  backend    ${backend}`,
    `  stack      ${runtime.stackName} (${deployment})`,
    `  REST API   ${runtime.apiUrl}`,
    ...section('routes', describeRoutes(runtime.app.routes)),
    ...section(
      'pollers',
      runtime.pollers.map((poller) => poller.description),
    ),
    ...section(
      'schedules',
      runtime.schedules.map((schedule) => schedule.description),
    ),
    ...section(
      'not run locally',
      runtime.app.skipped.map((skipped) => `${skipped.name} (${skipped.type}): ${skipped.reason}`),
    ),
  ];
}

/**
 * One line per route, marking each whose template method requires authorisation (AWS_IAM, COGNITO_USER_POOLS,
 * CUSTOM), which the local API does not check, and a last line saying what that means here and on AWS.
 */
export function describeRoutes(routes: readonly RouteDefinition[]): string[] {
  const lines = routes.map(
    (route) =>
      `${route.method.padEnd(6)} ${route.path} → ${route.functionName}` +
      (route.authorization === undefined ? '' : `  [${route.authorization}: not enforced locally]`),
  );
  const kinds = [...new Set(routes.flatMap((route) => route.authorization ?? []))];
  if (kinds.length === 0) return lines;
  return [
    ...lines,
    `${kinds.join(', ')} authorisation is not enforced locally: the marked routes answer any request here, ` +
      'and refuse unauthorised ones on AWS' +
      (kinds.includes('AWS_IAM') ? ' (sign a request there with `npx outbox call <METHOD> <path>`)' : ''),
  ];
}

/** The status line when no plug-in gives one: invocations so far, and how many failed. */
export function genericStatus(runtime: LocalRuntime): string {
  const stats = [...runtime.pollers, ...runtime.schedules].map((poller) => poller.stats());
  const sum = (pick: (stat: (typeof stats)[number]) => number): number =>
    stats.reduce((total, stat) => total + pick(stat), 0);
  return (
    `invocations ${sum((stat) => stat.invocations)} · failed ${sum((stat) => stat.failedInvocations)} · ` +
    `records ${sum((stat) => stat.records)} · discarded batches ${sum((stat) => stat.discardedBatches)}`
  );
}

async function main(): Promise<void> {
  // The AWS SDK warns once per process that Node 20 support ends in 2027; Lambda runs a newer Node, so
  // locally it is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const options = parseStartOptions(process.argv.slice(2), process.env);
  const out = statusConsole(process.stdout);
  const choice = await chooseBackend({
    backend: options.backend,
    endpoint: options.endpoint,
    env: process.env,
  });
  out.log(describeBackendChoice(choice));
  // Synthesis takes the longest: it starts now, while the runtime and the plug-in load.
  const synthesis = synthesizeApp({
    projectDir: options.projectDir,
    ...(options.stackName === undefined ? {} : { stackName: options.stackName }),
  });
  synthesis.catch(() => {});
  out.log('synthesizing the app and deploying it…');
  const [{ startLocalRuntime }, plugin] = await Promise.all([
    import('./runtime.ts'),
    options.plugin === undefined ? ({} as LocalPlugin) : loadPlugin(options.plugin, options.projectDir),
  ]);
  const runtime = await startLocalRuntime({
    port: options.port,
    backend: choice.kind,
    ...(choice.kind === 'external' ? { endpoint: choice.endpoint } : {}),
    synthesis,
    projectDir: options.projectDir,
    ...(options.stateFile === undefined ? {} : { stateFile: options.stateFile }),
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
    out.log(`${signal}: stopping pollers, API and backend…`);
    Promise.resolve(plugin.close?.())
      .catch(() => {})
      .then(() => runtime.stop())
      .then(
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

  // performance.now() counts from the start of this process: the time a user waits for `npm start`.
  for (const line of describeRuntime(runtime, performance.now())) out.log(line);
  if (options.seed && plugin.seed !== undefined) {
    for (const line of await plugin.seed(runtime)) out.log(`  ${line}`);
  }
  for (const line of plugin.tryIt?.(runtime) ?? []) out.log(`  ${line}`);
  out.log('');
  out.log('  Ctrl-C stops everything.');
  out.log('');
  const status = plugin.status ?? (async (running: LocalRuntime) => genericStatus(running));
  const refresh = async (): Promise<void> => {
    if (stopping) return;
    try {
      out.status(await status(runtime));
    } catch (error) {
      if (!stopping) out.status(`(status unavailable: ${describeError(error)})`);
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
  if (env.PORT === undefined || env.PORT === '') return DEFAULTS.port;
  try {
    return parsePort(env.PORT);
  } catch (cause) {
    throw new LocalRuntimeError('INVALID_OPTION', `PORT: ${(cause as Error).message}`, { cause });
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
