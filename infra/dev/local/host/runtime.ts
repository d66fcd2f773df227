/**
 * The local runtime: any CDK app run on this machine from its synthesized template alone. The template is
 * deployed to a backend (a fresh moto, an emulator named by AWS_ENDPOINT_URL, or the embedded in-memory
 * one); its functions run in this process, behind a local REST API for its routes, driven by pollers that
 * stand in for its event source mappings and by timers for its schedules. `npm start` and the integration
 * tests both run on it.
 */
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { startHttpApi } from '../api/http-api.ts';
import type { BackendKind, DeployedResource, DeployedStack } from '../backends/backend.ts';
import { type BackendChoice, chooseBackend } from '../backends/choose-backend.ts';
import { type EmulatorClientConfig, emulatorClientConfig } from '../backends/emulator-config.ts';
import { stackContext, stackOutputs } from '../backends/stack-context.ts';
import { startBackend } from '../backends/start-backend.ts';
import { startTransactionSerializer } from '../backends/transaction-serializer.ts';
import { createEventSourcePollers } from '../events/event-source-pollers.ts';
import type { CycleResult, Poller } from '../events/poll-loop.ts';
import { filePollerState, memoryPollerState, type PollerStateStore } from '../events/poller-state.ts';
import { createScheduleRunner } from '../events/schedule-runner.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { asTemplate, type CloudFormationTemplate } from '../template/cloudformation-template.ts';
import type { ResolutionContext } from '../template/intrinsics.ts';
import { type AppDefinition, readApp } from '../template/read-app.ts';
import type { FunctionDefinition } from '../template/read-functions.ts';
import { type SynthesizedStack, synthesizeApp } from '../template/synthesize-app.ts';
import { type FunctionEnvironment, functionEnvironment } from './function-environment.ts';
import { type FunctionHost, startFunctionHost } from './function-host.ts';
import type { HostedFunction } from './host-protocol.ts';
import {
  type HandlerOverride,
  type Invocation,
  type LocalFunction,
  type LocalHandler,
  loadLocalFunction,
  localFunction,
} from './local-function.ts';
import { currentNodeMajor, findNodeBinary, type NodeBinary, nodeMajorOf } from './node-runtime.ts';
import { processEnvironment } from './process-environment.ts';
import { watchSources } from './source-watcher.ts';

/** Options of {@link startLocalRuntime}; every field is optional. */
export interface LocalRuntimeOptions {
  /** Port of the local REST API on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** Forces a backend. @default external with an endpoint, else moto when installed, else embedded */
  readonly backend?: BackendKind;
  /** An emulator to deploy to instead of a fresh moto. @default env.AWS_ENDPOINT_URL */
  readonly endpoint?: string;
  /** The template to run. @default the stack synthesized from `projectDir`'s cdk.json */
  readonly template?: CloudFormationTemplate | Readonly<Record<string, unknown>>;
  /**
   * A synthesis already under way, to run instead of synthesizing here: `npm start` starts it before it loads
   * the runtime, so the app's synthesis overlaps the runtime's own loading.
   */
  readonly synthesis?: Promise<SynthesizedStack>;
  /**
   * The stack to run (of an app with several) and the base of the deployed name, `<stackName>-local`, which
   * is never the name `cdk deploy` uses, so a local run cannot replace a deployed stack.
   * @default the app's only stack (with `template`: the stack named in its construct paths)
   */
  readonly stackName?: string;
  /** Where cdk.json is; handler entries and `.local/` are relative to it. @default process.cwd() */
  readonly projectDir?: string;
  /** Receives the runtime's own lines (failed batches, discarded records, handler errors). @default stderr */
  readonly log?: (line: string) => void;
  /** Receives moto's request log and warnings. @default dropped */
  readonly emulatorLog?: (line: string) => void;
  /** Wraps or replaces handlers, by function name (`Outbox/Relay`), e.g. to inject a fault in a test. */
  readonly handlers?: Readonly<Record<string, HandlerOverride>>;
  /** Create the pollers paused; start them with {@link LocalRuntime.resumePollers}. @default false */
  readonly pollersPaused?: boolean;
  /** Pause between idle polls. @default 250 (Lambda polls streams four times a second) */
  readonly pollIntervalMs?: number;
  /** Visibility timeout for messages of a failed consumer batch (faster redelivery in tests). @default the queue's */
  readonly retryVisibilitySeconds?: number;
  /** Powertools log level of the handlers, over the template's. @default env.LOG_LEVEL, else 'WARN' */
  readonly logLevel?: string;
  /**
   * Where stream checkpoints and in-flight receipts are kept against an external emulator.
   * @default `<projectDir>/.local/poller-state.json`
   */
  readonly stateFile?: string;
  /**
   * Keeps the embedded backend on disk in this folder (tables, streams, queues, the stack) and the pollers'
   * checkpoints beside it, so a start on the same folder finds everything again. Embedded backend only.
   * @default in memory
   */
  readonly dataDir?: string;
  /** Where AWS_ENDPOINT_URL and LOG_LEVEL are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Where the functions run: `process` — a process of the Node.js major their `Runtime` names (`nodejs24.x` →
   * 24), as Lambda runs them, which is what `npm start` does and what hot reload needs; `in-process` — this
   * process, for tests that watch a handler from inside (SDK calls recorded by wrapping `send`).
   * @default 'in-process'
   */
  readonly functionHost?: FunctionHostKind;
  /**
   * Hot reload: a change to a source file under `projectDir` (a handler, anything it imports) reloads the
   * functions, so the next invocation runs the new code; in-flight ones finish on the old. Needs functionHost
   * `process`. @default false
   */
  readonly hotReload?: boolean;
  /** Called after each hot reload with the files that changed (npm start checks whether the CDK app did). */
  readonly onSourceChange?: (files: readonly string[]) => void;
  /** Paths under `projectDir` hot reload does not watch (a data folder). */
  readonly watchIgnore?: readonly string[];
}

/** Where a runtime's functions run: see {@link LocalRuntimeOptions.functionHost}. */
export type FunctionHostKind = 'process' | 'in-process';

/** How long each start-up step took, in milliseconds. */
export interface StartupTimings {
  /** From the start until the backend answered; it boots while the app is synthesized. */
  readonly backendMs: number;
  readonly synthMs: number;
  readonly deployMs: number;
  readonly totalMs: number;
}

/** A running local runtime. */
export interface LocalRuntime {
  readonly backend: BackendKind;
  /**
   * The endpoint every SDK client of the handlers and pollers uses: on an emulator, a forwarder in front of it
   * that sends it DynamoDB transactions one at a time; on the embedded backend, the backend itself.
   */
  readonly endpoint: string;
  /** The backend's own endpoint, where the stack was deployed. */
  readonly emulatorEndpoint: string;
  /** Process id of the moto server started for this run; `undefined` for the other backends. */
  readonly emulatorPid: number | undefined;
  /** Base URL of the REST API, e.g. `http://127.0.0.1:3000`. */
  readonly apiUrl: string;
  /** The deployed stack's name, `<stack>-local`. */
  readonly stackName: string;
  /** What the deploy did: created the stack, updated it in place, or kept it unchanged. */
  readonly deployment: 'created' | 'updated' | 'unchanged';
  /** The app as read from the template: functions, mappings, routes, schedules, what is not run. */
  readonly app: AppDefinition;
  /** The stack's outputs. */
  readonly outputs: Readonly<Record<string, string>>;
  /** The stack's resources, by logical id. */
  readonly resources: ReadonlyMap<string, DeployedResource>;
  /** Each function's resolved environment, by function name. */
  readonly env: Readonly<Record<string, FunctionEnvironment>>;
  /** The functions, by name (`Outbox/Relay`). */
  readonly functions: Readonly<Record<string, LocalFunction>>;
  /** The stream and queue pollers, in template order. */
  readonly pollers: readonly Poller[];
  /** Timers of the scheduled functions (paused, resumed and stopped with the pollers; not drained). */
  readonly schedules: readonly Poller[];
  /** Where stream checkpoints are kept: a file, or `memory` for a backend that starts empty. */
  readonly stateLocation: string;
  /** The embedded backend's data folder (`dataDir`), when it has one. */
  readonly dataLocation: string | undefined;
  /** SDK client settings for the backend (endpoint, region, dummy credentials), for tests' own clients. */
  readonly clientConfig: EmulatorClientConfig;
  readonly timings: StartupTimings;
  /** The Node.js each function runs on, by function name (`v24.21.0`), and where: its own process or this one. */
  readonly functionNodes: Readonly<
    Record<string, { readonly version: string; readonly host: FunctionHostKind }>
  >;
  /** Invokes a function by name directly (as `aws lambda invoke` would). */
  invoke(functionName: string, event: unknown): Promise<Invocation>;
  /**
   * Loads the functions' current code: the next invocations run it, in-flight ones finish on the old code; when
   * the code does not load, the old code keeps serving and the error is returned. Needs functionHost `process`.
   */
  reloadFunctions(): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: Error }>;
  /** Stops every poller and schedule after its current cycle (in-flight invocations finish first). */
  pausePollers(): Promise<void>;
  resumePollers(): void;
  /** Runs one poll cycle of every poller, in template order, ignoring batching windows. */
  pollOnce(): Promise<number>;
  /**
   * Polls until a full round of every poller finds nothing waiting (failing batches are retried, as far as
   * their retry settings allow); handy after pausing. Throws `DRAIN_TIMEOUT` when it does not settle.
   */
  drain(options?: { readonly timeoutMs?: number }): Promise<void>;
  /** Stops pollers (awaiting in-flight invocations), the REST API and the backend this run started. */
  stop(): Promise<void>;
}

const DEFAULTS = {
  functionHost: 'in-process',
  port: 3000,
  logLevel: 'WARN',
  drainTimeoutMs: 30_000,
  idleTimeoutMs: 10_000,
  stackName: 'LocalApp',
  stateFile: join('.local', 'poller-state.json'),
} as const;

/**
 * Starts the app locally and resolves once the API answers and the pollers run.
 * @example
 * const runtime = await startLocalRuntime({ port: 0, log: () => {} });
 * try {
 *   const response = await fetch(`${runtime.apiUrl}/inventory/SKU-APPLE`);
 * } finally {
 *   await runtime.stop();
 * }
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const projectDir = options.projectDir ?? process.cwd();
  const started = Date.now();
  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => log(`[local] clean-up failed: ${String(error)}`));
    }
  };

  try {
    const choice = await chooseBackend({ backend: options.backend, endpoint: options.endpoint, env });
    if (options.dataDir !== undefined && choice.kind !== 'embedded') {
      throw new LocalRuntimeError(
        'INVALID_OPTION',
        `--data-dir keeps the embedded backend on disk, and this run uses ${choice.kind === 'external' ? `the emulator at ${choice.endpoint}` : 'moto'}: add --backend embedded, or leave --data-dir out (an emulator you run keeps its own data)`,
      );
    }
    // The backend boots (moto takes a second or two) while the app is synthesized.
    const backendStarting = startBackend(choice, {
      log,
      emulatorLog: options.emulatorLog,
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    });
    let backendMs = 0;
    void backendStarting.then(
      () => {
        backendMs = Date.now() - started;
      },
      () => {},
    );
    cleanups.push(() =>
      backendStarting.then(
        (backend) => backend.stop(),
        () => {},
      ),
    );
    const synthStarted = Date.now();
    const source = await templateSource(options, projectDir);
    const synthMs = Date.now() - synthStarted;
    const app = readApp(source.template);
    const overrides = checkedOverrides(options.handlers, app);
    const hostKind = options.functionHost ?? DEFAULTS.functionHost;
    // Function hosts boot (Node, tsx) while the backend comes up and the stack deploys.
    let provideLoadOptions: (value: LoadOptions) => void = () => {};
    let failLoadOptions: (error: unknown) => void = () => {};
    const loading = new Promise<LoadOptions>((resolveLoad, rejectLoad) => {
      provideLoadOptions = resolveLoad;
      failLoadOptions = rejectLoad;
    });
    loading.catch(() => {});
    const hostsStarting =
      hostKind === 'process' ? hostFunctions(app, { projectDir, overrides, log, loading }) : undefined;
    hostsStarting?.catch(() => {});
    cleanups.push(async () => {
      failLoadOptions(
        new LocalRuntimeError('DEPLOY_FAILED', 'the runtime stopped before the stack was deployed'),
      );
      const started = await hostsStarting?.catch(() => undefined);
      await Promise.all((started?.hosts ?? []).map((host) => host.stop(DEFAULTS.idleTimeoutMs)));
    });
    const backend = await backendStarting;

    const deployStarted = Date.now();
    const deployed = await backend.deploy(source.template, `${source.stackName}-local`);
    const deployMs = Date.now() - deployStarted;

    // An emulator gets transactions one at a time (moto loses writes to concurrent ones); the embedded
    // backend's transactions are atomic already.
    const serializer =
      backend.kind === 'embedded'
        ? undefined
        : await startTransactionSerializer({ upstream: backend.endpoint });
    if (serializer !== undefined) cleanups.push(() => serializer.stop());
    const endpoint = serializer?.endpoint ?? backend.endpoint;
    const clientConfig = { ...emulatorClientConfig(endpoint), region: deployed.region };
    const clients = {
      dynamodb: new DynamoDBClient(clientConfig),
      streams: new DynamoDBStreamsClient(clientConfig),
      sqs: new SQSClient(clientConfig),
    };
    cleanups.push(async () => {
      for (const client of Object.values(clients)) client.destroy();
    });
    const context = await stackContext(deployed, { template: source.template, clients });
    const outputs = stackOutputs(deployed, source.template, context);

    const shared = processEnvironment();
    cleanups.push(async () => shared.restore());
    const loadOptions: LoadOptions = {
      deployed,
      context,
      endpoint,
      logLevel: options.logLevel ?? nonEmpty(env.LOG_LEVEL) ?? DEFAULTS.logLevel,
      projectDir,
      overrides,
      processEnv: shared,
      log,
    };
    provideLoadOptions(loadOptions);
    const hosted = await hostsStarting;
    const functions = hosted?.functions ?? (await loadFunctions(app, loadOptions));
    const functionNodes = Object.fromEntries(
      [...functions.keys()].map((name) => [
        name,
        { version: hosted?.nodeOf.get(name)?.version ?? process.version, host: hostKind },
      ]),
    );
    cleanups.push(async () => {
      await Promise.race([
        Promise.all([...functions.values()].map((fn) => fn.idle())),
        new Promise((resolve) => setTimeout(resolve, DEFAULTS.idleTimeoutMs).unref()),
      ]);
    });
    const invoke = (functionName: string, event: unknown): Promise<Invocation> => {
      const fn = functions.get(functionName);
      if (fn === undefined) return Promise.reject(unknownFunction(functionName, app));
      return fn.invoke(event);
    };

    const api = await startHttpApi({
      routes: app.routes,
      port: options.port ?? DEFAULTS.port,
      invoke,
      accountId: deployed.accountId,
      log,
    });
    cleanups.push(() => api.close());

    const state =
      backend.dataLocation === undefined
        ? pollerState(choice, options.stateFile ?? join(projectDir, DEFAULTS.stateFile))
        : filePollerState(join(backend.dataLocation, 'poller-state.json'));
    const pollers = await createEventSourcePollers({
      mappings: app.mappings,
      functions,
      context,
      clients,
      // The emulator's own endpoint keys the saved checkpoints: the forwarder's port changes every run.
      endpoint: backend.stateKey ?? backend.endpoint,
      state,
      retryVisibilitySeconds: options.retryVisibilitySeconds,
      intervalMs: options.pollIntervalMs,
      log,
    });
    if (options.hotReload === true) {
      if (hosted === undefined) {
        throw new LocalRuntimeError('INVALID_OPTION', 'hot reload needs functionHost process');
      }
      const watcher = watchSources({
        rootDir: projectDir,
        ignorePaths: options.watchIgnore ?? [],
        onChange: hotReloader(hosted.hosts, { log, onSourceChange: options.onSourceChange }),
      });
      cleanups.push(async () => watcher.close());
    }
    const schedules = createSchedules(app, { functions, context, log });
    const everything = [...pollers, ...schedules];
    cleanups.push(async () => {
      // Tell running handlers time is up first, so a sweeper run ends now rather than at its deadline.
      for (const fn of functions.values()) fn.wrapUp();
      for (const host of hosted?.hosts ?? []) host.wrapUp();
      await Promise.all(everything.map((poller) => poller.stop()));
    });
    for (const poller of everything) {
      if (options.pollersPaused === true) await poller.pause();
      poller.start();
    }

    let stopping: Promise<void> | undefined;
    return {
      backend: backend.kind,
      endpoint,
      emulatorEndpoint: backend.endpoint,
      emulatorPid: backend.pid,
      apiUrl: api.url,
      stackName: deployed.stackName,
      deployment: deployed.change ?? 'created',
      app,
      outputs,
      resources: deployed.resources,
      env: Object.fromEntries([...functions].map(([name, fn]) => [name, fn.env])),
      functions: Object.fromEntries(functions),
      pollers,
      schedules,
      stateLocation: state.location,
      dataLocation: backend.dataLocation,
      clientConfig,
      timings: { backendMs, synthMs, deployMs, totalMs: Date.now() - started },
      functionNodes,
      invoke,
      async reloadFunctions() {
        if (hosted === undefined) {
          return {
            ok: false,
            error: new LocalRuntimeError(
              'INVALID_OPTION',
              'functions run in this process (functionHost in-process): their modules cannot be reloaded',
            ),
          };
        }
        for (const host of hosted.hosts) {
          const outcome = await host.reload();
          if (!outcome.ok) return outcome;
        }
        return { ok: true };
      },
      async pausePollers() {
        await Promise.all(everything.map((poller) => poller.pause()));
      },
      resumePollers() {
        for (const poller of everything) poller.resume();
      },
      async pollOnce() {
        let progressed = 0;
        for (const poller of pollers) progressed += (await poller.pollOnce()).progressed;
        return progressed;
      },
      async drain(drainOptions = {}) {
        const timeoutMs = drainOptions.timeoutMs ?? DEFAULTS.drainTimeoutMs;
        const deadline = Date.now() + timeoutMs;
        const results: CycleResult[] = [];
        do {
          if (Date.now() > deadline) {
            throw new LocalRuntimeError('DRAIN_TIMEOUT', `pollers still busy after ${timeoutMs} ms`);
          }
          results.length = 0;
          for (const poller of pollers) results.push(await poller.pollOnce());
        } while (results.some((result) => !result.idle));
      },
      stop() {
        // Pollers first (they may be mid-invocation), then the API, then the backend they all talk to.
        stopping ??= cleanUp();
        return stopping;
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** The template and the stack name it is deployed under (before `-local`). */
async function templateSource(
  options: LocalRuntimeOptions,
  projectDir: string,
): Promise<{ readonly template: CloudFormationTemplate; readonly stackName: string }> {
  if (options.synthesis !== undefined) return options.synthesis;
  if (options.template !== undefined) {
    const template = asTemplate(options.template);
    const stackName = options.stackName ?? readApp(template).stackName ?? DEFAULTS.stackName;
    return { template, stackName };
  }
  return synthesizeApp({
    projectDir,
    ...(options.stackName === undefined ? {} : { stackName: options.stackName }),
  });
}

/** The overrides, after checking that each names a function the runtime runs (a typo must not pass silently). */
function checkedOverrides(
  handlers: Readonly<Record<string, HandlerOverride>> | undefined,
  app: AppDefinition,
): ReadonlyMap<string, HandlerOverride> {
  const overrides = new Map(Object.entries(handlers ?? {}));
  for (const name of overrides.keys()) {
    if (!app.functions.some((fn) => fn.name === name)) throw unknownFunction(name, app);
  }
  return overrides;
}

function unknownFunction(name: string, app: AppDefinition): LocalRuntimeError {
  const known = app.functions.map((fn) => fn.name).join(', ') || 'none';
  return new LocalRuntimeError('UNKNOWN_FUNCTION', `no function ${name} runs locally (functions: ${known})`);
}

interface LoadOptions {
  readonly deployed: DeployedStack;
  readonly context: ResolutionContext;
  readonly endpoint: string;
  readonly logLevel: string;
  readonly projectDir: string;
  readonly overrides: ReadonlyMap<string, HandlerOverride>;
  readonly processEnv: ReturnType<typeof processEnvironment>;
  readonly log: (line: string) => void;
}

/** Loads the functions one after another: a plain handler's variables are in process.env while it is imported. */
async function loadFunctions(app: AppDefinition, options: LoadOptions): Promise<Map<string, LocalFunction>> {
  const functions = new Map<string, LocalFunction>();
  const { region, accountId, stackName } = options.context;
  for (const definition of app.functions) {
    // A backend that does not model functions (the embedded one) has no name for them: name them as
    // CloudFormation would, after the stack and the construct.
    const physicalName =
      options.deployed.resources.get(definition.logicalId)?.physicalId ||
      `${stackName}-${definition.name.replaceAll('/', '-')}`;
    const fn = await loadLocalFunction(definition, {
      env: functionEnvironment(definition, {
        endpoint: options.endpoint,
        context: options.context,
        physicalName,
        logLevel: options.logLevel,
      }),
      physicalName,
      arn: `arn:${options.context.partition ?? 'aws'}:lambda:${region}:${accountId}:function:${physicalName}`,
      rootDir: options.projectDir,
      override: options.overrides.get(definition.name),
      processEnv: options.processEnv,
    });
    if (fn.initError !== undefined) options.log(`[local] ${fn.name} cannot run: ${fn.initError.message}`);
    functions.set(fn.name, fn);
  }
  return functions;
}

/**
 * The functions in host processes, one per Node.js major their runtimes name; each function's handler calls into
 * its host, wrapped by its override (which runs here), with timeouts and in-flight tracking kept here.
 */
async function hostFunctions(
  app: AppDefinition,
  options: {
    readonly projectDir: string;
    readonly overrides: ReadonlyMap<string, HandlerOverride>;
    readonly log: (line: string) => void;
    /** The load options, known once the stack is deployed; the hosts boot meanwhile. */
    readonly loading: Promise<LoadOptions>;
  },
): Promise<{
  functions: Map<string, LocalFunction>;
  hosts: FunctionHost[];
  nodeOf: Map<string, NodeBinary>;
}> {
  const byMajor = new Map<number, FunctionDefinition[]>();
  for (const definition of app.functions) {
    const major =
      (definition.runtime === undefined ? undefined : nodeMajorOf(definition.runtime)) ?? currentNodeMajor();
    byMajor.set(major, [...(byMajor.get(major) ?? []), definition]);
  }
  // Every Node is found first: a missing one fails the start before any host boots.
  const nodes = new Map(
    [...byMajor.keys()].map((major) => [major, findNodeBinary(major, options.projectDir)]),
  );
  const targetsOf = async (definitions: readonly FunctionDefinition[]): Promise<HostedFunction[]> => {
    const loadOptions = await options.loading;
    const { region, accountId, stackName } = loadOptions.context;
    return definitions.map((definition) => {
      const physicalName =
        loadOptions.deployed.resources.get(definition.logicalId)?.physicalId ||
        `${stackName}-${definition.name.replaceAll('/', '-')}`;
      return {
        definition,
        env: functionEnvironment(definition, {
          endpoint: loadOptions.endpoint,
          context: loadOptions.context,
          physicalName,
          logLevel: loadOptions.logLevel,
        }),
        physicalName,
        arn: `arn:${loadOptions.context.partition ?? 'aws'}:lambda:${region}:${accountId}:function:${physicalName}`,
      };
    });
  };
  const started = await Promise.allSettled(
    [...byMajor].map(async ([major, definitions]) => {
      const targets = targetsOf(definitions);
      // A failed deploy rejects the targets: the host start fails with it, the caller reports the deploy's error.
      targets.catch(() => {});
      const node = nodes.get(major);
      if (node === undefined) throw new Error(`no Node ${major}`);
      const host = await startFunctionHost({
        functions: targets,
        rootDir: options.projectDir,
        node,
        log: options.log,
      });
      return { host, targets: await targets };
    }),
  );
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(
      started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.host.stop(0)] : [])),
    );
    throw failed.reason;
  }
  const functions = new Map<string, LocalFunction>();
  const nodeOf = new Map<string, NodeBinary>();
  const hosts: FunctionHost[] = [];
  for (const result of started) {
    if (result.status !== 'fulfilled') continue;
    const { host, targets } = result.value;
    hosts.push(host);
    for (const target of targets) {
      const { name } = target.definition;
      const base: LocalHandler = (event) => host.call(name, event);
      const override = options.overrides.get(name);
      const info = host.info(name);
      if (info.initError !== undefined) options.log(`[local] ${name} cannot run: ${info.initError.message}`);
      nodeOf.set(name, host.node);
      functions.set(
        name,
        localFunction({
          definition: target.definition,
          env: target.env,
          handler: override === undefined ? base : override(base, target.env),
          physicalName: target.physicalName,
          arn: target.arn,
          plain: info.plain,
          initError: info.initError,
        }),
      );
    }
  }
  return { functions, hosts, nodeOf };
}

/**
 * What hot reload does with changed files: reload every host, one reload at a time (changes that arrive meanwhile
 * make one more), saying on the console what changed and whether the new code serves.
 */
function hotReloader(
  hosts: readonly FunctionHost[],
  options: {
    readonly log: (line: string) => void;
    readonly onSourceChange: ((files: readonly string[]) => void) | undefined;
  },
): (files: readonly string[]) => void {
  let running: Promise<void> | undefined;
  const waiting = new Set<string>();
  const run = async (): Promise<void> => {
    while (waiting.size > 0) {
      const files = [...waiting];
      waiting.clear();
      const shown =
        files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
      const outcomes = await Promise.all(hosts.map((host) => host.reload()));
      const failure = outcomes.find((outcome) => !outcome.ok);
      if (failure === undefined || failure.ok) {
        options.log(`[local] ${shown} changed: functions reloaded, the next invocations run the new code`);
      } else {
        options.log(
          `[local] ${shown} changed, but the functions do not load; the previous code keeps serving:\n  ${failure.error.message.replaceAll('\n', '\n  ')}`,
        );
      }
      options.onSourceChange?.(files);
    }
  };
  const kick = (): void => {
    if (running !== undefined) return;
    running = run().finally(() => {
      running = undefined;
      if (waiting.size > 0) kick();
    });
  };
  return (files) => {
    for (const file of files) waiting.add(file);
    kick();
  };
}

function createSchedules(
  app: AppDefinition,
  options: {
    readonly functions: ReadonlyMap<string, LocalFunction>;
    readonly context: ResolutionContext;
    readonly log: (line: string) => void;
  },
): Poller[] {
  return app.schedules.flatMap((schedule) => {
    const fn = options.functions.get(schedule.functionName);
    if (fn === undefined) return [];
    const { region, accountId } = options.context;
    return [createScheduleRunner({ fn, schedule, region, accountId, log: options.log })];
  });
}

/** A backend that outlives the run keeps its streams, so their checkpoints go to a file; the others start empty. */
function pollerState(choice: BackendChoice, file: string): PollerStateStore {
  return choice.kind === 'external' ? filePollerState(file) : memoryPollerState();
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
