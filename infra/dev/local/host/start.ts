/**
 * `npm start`: the project's CDK app on this machine without AWS. Says first which backend runs it, starts the
 * local runtime from the synthesized templates (every stack of the app, or the one `--stack` names), prints what
 * runs where, keeps a live status line, and shuts everything down (moto included) on Ctrl-C. What only one app
 * needs (starting data, its own status line) comes from a plug-in module (`--plugin`), called once with the
 * runtime of every stack.
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { BackendKind } from '../backends/backend.ts';
import { chooseBackend, describeBackendChoice } from '../backends/choose-backend.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { RouteDefinition } from '../template/read-routes.ts';
import { type SynthesizedApp, synthesizeApp } from '../template/synthesize-app.ts';
import { describeTemplateChanges, templateChanges } from '../template/template-changes.ts';
import type { LocalRuntime } from './runtime.ts';
import { type LocalPlugin, loadPlugin } from './start-plugin.ts';
import { statusConsole } from './status-console.ts';

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
  /** Where the embedded backend keeps its data on disk; in memory when undefined. */
  readonly dataDir: string | undefined;
  /** Reload the functions when a source file changes. */
  readonly hotReload: boolean;
}

const DEFAULTS = {
  port: 3000,
  refreshMs: 1_500,
  // A stop that takes longer ends anyway: the issue of a stuck handler must not keep the port.
  stopDeadlineMs: 8_000,
  // The same signal again within this window is a copy (npm relays the terminal's Ctrl-C to its child, and a
  // signal to the process group reaches npm and the runtime both), not a second Ctrl-C.
  relayWindowMs: 2_000,
  parentWatchMs: 500,
} as const;

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
    .option('--stack <name>', 'run only this stack of the app (default: every stack)')
    .option('--project <dir>', 'the directory holding cdk.json', '.')
    .option('--plugin <module>', "the app's npm start plug-in (starting data, status line)")
    .option(
      '--state-file <path>',
      'where stream checkpoints are kept against an emulator (default .local/poller-state.json)',
    )
    .option(
      '--data-dir <dir>',
      'keep the embedded backend on disk in this folder (tables, streams, queues, the stack); default: in memory',
    )
    .option('--no-hot-reload', 'do not reload the functions when a source file changes')
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
    dataDir?: string;
    hotReload: boolean;
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
    dataDir: options.dataDir === undefined ? undefined : resolve(options.dataDir),
    hotReload: options.hotReload,
  };
}

/** The banner: what runs where, each stack deployed, which routes, pollers and schedules, what is not run. */
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
  } as const;
  const section = (title: string, lines: readonly string[]): string[] =>
    lines.length === 0 ? [] : [`  ${title}`, ...lines.map((line) => `    ${line}`)];
  const nodes = [...new Set(Object.values(runtime.functionNodes).map((node) => node.version))];
  const host =
    Object.values(runtime.functionNodes)[0]?.host === 'process' ? ', in a process of their own' : '';
  return [
    `running locally, ready ${seconds(readyMs)} after start (the app synthesized while the backend booted, ` +
      `answering ${seconds(backendMs)} into the runtime's start; deploy ${seconds(deployMs)})`,
    `  backend    ${backend}`,
    ...(runtime.dataLocation === undefined ? [] : [`  data       ${runtime.dataLocation}`]),
    ...runtime.stacks.map((stack) => `  stack      ${stack.deployedName} (${deployment[stack.deployment]})`),
    `  REST API   ${runtime.apiUrl}`,
    ...(nodes.length === 0 ? [] : [`  functions  Node ${nodes.join(', ')}${host}`]),
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
  let appChanges: { check(): void } | undefined;
  const runtime = await startLocalRuntime({
    port: options.port,
    backend: choice.kind,
    ...(choice.kind === 'external' ? { endpoint: choice.endpoint } : {}),
    synthesis,
    projectDir: options.projectDir,
    ...(options.stateFile === undefined ? {} : { stateFile: options.stateFile }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    functionHost: 'process',
    hotReload: options.hotReload,
    ...(options.dataDir === undefined ? {} : { watchIgnore: [options.dataDir] }),
    // A change during the start is caught by the check the first reload after it makes.
    onSourceChange: () => appChanges?.check(),
    log: (line) => out.log(line),
  });
  appChanges = appChangeCheck(options, await synthesis, (line) => out.log(line));
  stopOnSignals({
    out,
    stop: () =>
      Promise.resolve(plugin.close?.())
        .catch(() => {})
        .then(() => runtime.stop()),
  });

  // performance.now() counts from the start of this process: the time a user waits for `npm start`.
  for (const line of describeRuntime(runtime, performance.now())) out.log(line);
  if (options.seed && plugin.seed !== undefined) {
    for (const line of await plugin.seed(runtime)) out.log(`  ${line}`);
  }
  for (const line of plugin.tryIt?.(runtime) ?? []) out.log(`  ${line}`);
  out.log('');
  out.log(
    options.hotReload
      ? '  Edit a handler or anything it imports: the next invocation runs it (data kept).'
      : '  Hot reload is off (--no-hot-reload): restart to run changed code.',
  );
  out.log(`  Ctrl-C (or SIGTERM, SIGHUP) stops everything${describeKept(runtime)}.`);
  out.log('');
  const status = plugin.status ?? (async (running: LocalRuntime) => genericStatus(running));
  const refresh = async (): Promise<void> => {
    if (stopRequested) return;
    try {
      out.status(await status(runtime));
    } catch (error) {
      if (!stopRequested) out.status(`(status unavailable: ${describeError(error)})`);
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs);
  timer.unref();
}

/** Whether a stop has begun (the status line then stays quiet). */
let stopRequested = false;

/**
 * Stops on SIGINT, SIGTERM or SIGHUP — to this process, to npm (which forwards SIGINT and SIGTERM to it), or to
 * the process group — and when the parent process goes away (npm ends on SIGHUP, or is killed, without telling
 * its child): prints what it does, stops within {@link DEFAULTS.stopDeadlineMs}, prints `stopped.` and exits. A
 * copy of the signal that began the stop is ignored; the same signal again later leaves at once.
 */
function stopOnSignals(options: {
  readonly out: ReturnType<typeof statusConsole>;
  readonly stop: () => Promise<void>;
}): void {
  const { out } = options;
  let first: { readonly reason: string; readonly at: number } | undefined;
  const leave = (code: number, note: string): never => {
    out.log(note === '' ? 'stopped.' : `stopped (${note}).`);
    // The exit handlers kill moto's process group; a function host ends when its IPC channel closes.
    process.exit(code);
  };
  const begin = (reason: string, relayable: boolean): void => {
    if (first !== undefined) {
      if (!relayable || Date.now() - first.at < DEFAULTS.relayWindowMs) return;
      leave(130, `${reason} again: not waiting for the rest`);
    }
    first = { reason, at: Date.now() };
    stopRequested = true;
    out.end();
    out.log(`${reason}: stopping pollers, API, functions and backend…`);
    const deadline = setTimeout(
      () => leave(1, `forced after ${DEFAULTS.stopDeadlineMs / 1000} s: something did not stop in time`),
      DEFAULTS.stopDeadlineMs,
    );
    deadline.unref();
    options.stop().then(
      () => leave(0, ''),
      (error: unknown) => {
        out.log(`stop failed: ${describeError(error)}`);
        leave(1, 'after a failure');
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => begin(signal, true));
  // A parent-death watch: when npm goes without forwarding a signal, the runtime is reparented.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) begin(`parent process ${parent} exited`, false);
  }, DEFAULTS.parentWatchMs);
  watch.unref();
}

/** What a restart keeps, for the stop line. */
function describeKept(runtime: LocalRuntime): string {
  if (runtime.dataLocation !== undefined) return `; a start with the same --data-dir finds the data again`;
  if (runtime.backend === 'external') {
    return runtime.stacks.length > 1
      ? '; the emulator keeps the stacks and their data'
      : '; the emulator keeps the stack and its data';
  }
  if (runtime.backend === 'moto') {
    return '; the data goes with this moto (to keep it, run moto yourself and set AWS_ENDPOINT_URL)';
  }
  return '; the data goes with it (keep it with --data-dir <dir>)';
}

/**
 * After a hot reload, re-synthesizes the app (one synthesis at a time) and says when a template changed: a new
 * function, table, route or stack needs a restart to be deployed and run.
 */
function appChangeCheck(
  options: StartOptions,
  deployed: SynthesizedApp,
  log: (line: string) => void,
): { check(): void } {
  let running = false;
  let again = false;
  let reported = '';
  const run = async (): Promise<void> => {
    running = true;
    do {
      again = false;
      try {
        const next = await synthesizeApp({
          projectDir: options.projectDir,
          ...(options.stackName === undefined ? {} : { stackName: options.stackName }),
        });
        const text = describeAppChanges(deployed, next);
        if (text !== reported && text !== '') {
          log(
            `[local] the CDK app changed (${text}): restart npm start to deploy it; the functions already run the new code`,
          );
        }
        reported = text;
      } catch (error) {
        log(
          `[local] the CDK app does not synthesize after the change: ${describeError(error).split('\n')[0]}`,
        );
      }
    } while (again);
    running = false;
  };
  return {
    check() {
      if (running) {
        again = true;
        return;
      }
      void run();
    },
  };
}

/** What changed from one synthesis of the app to the next, per stack (named when the app has several). */
export function describeAppChanges(before: SynthesizedApp, after: SynthesizedApp): string {
  const several = before.stackCount > 1 || after.stackCount > 1;
  const parts: string[] = [];
  for (const stack of after.stacks) {
    const previous = before.stacks.find((candidate) => candidate.stackName === stack.stackName);
    if (previous === undefined) {
      parts.push(`stack ${stack.displayName} added`);
      continue;
    }
    const changes = templateChanges(previous.template, stack.template);
    if (changes === undefined) continue;
    const text = describeTemplateChanges(changes);
    parts.push(several ? `${stack.displayName}: ${text}` : text);
  }
  for (const stack of before.stacks) {
    if (!after.stacks.some((candidate) => candidate.stackName === stack.stackName)) {
      parts.push(`stack ${stack.displayName} removed`);
    }
  }
  return parts.join('; ');
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
