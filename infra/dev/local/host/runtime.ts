/**
 * The local runtime: any CDK app run on this machine from its synthesized templates alone. Every stack of the
 * app (or the one asked for) is deployed to one backend (a fresh moto, an emulator named by AWS_ENDPOINT_URL,
 * or the embedded in-memory one), in dependency order; the functions of every stack run in this process or in
 * host processes, behind one local REST API serving every stack's routes, driven by pollers that stand in for
 * the event source mappings and by timers for the schedules. `npm start` and the integration tests both run
 * on it.
 */
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { startHttpApi } from '../api/http-api.ts';
import type { Backend, BackendKind, DeployedResource, DeployedStack } from '../backends/backend.ts';
import { type BackendChoice, chooseBackend } from '../backends/choose-backend.ts';
import { type EmulatorClientConfig, emulatorClientConfig } from '../backends/emulator-config.ts';
import {
  type BackendClients,
  backendExports,
  stackContext,
  stackExports,
  stackOutputs,
} from '../backends/stack-context.ts';
import { startBackend } from '../backends/start-backend.ts';
import { startTransactionSerializer } from '../backends/transaction-serializer.ts';
import { createEventSourcePollers } from '../events/event-source-pollers.ts';
import type { CycleResult, Poller } from '../events/poll-loop.ts';
import { filePollerState, memoryPollerState, type PollerStateStore } from '../events/poller-state.ts';
import { createScheduleRunner } from '../events/schedule-runner.ts';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { mergeApps, qualifiedName, qualifyApp } from '../template/app-of-stacks.ts';
import { asTemplate, type CloudFormationTemplate } from '../template/cloudformation-template.ts';
import type { ResolutionContext } from '../template/intrinsics.ts';
import { type AppDefinition, readApp } from '../template/read-app.ts';
import type { FunctionDefinition } from '../template/read-functions.ts';
import { deploymentOrder, importDependencies, importedNames } from '../template/stack-order.ts';
import { type SynthesizedApp, type SynthesizedStack, synthesizeApp } from '../template/synthesize-app.ts';
import { type FunctionEnvironment, functionEnvironment } from './function-environment.ts';
import { type FunctionHost, startFunctionHost } from './function-host.ts';
import { type FunctionNames, functionNames } from './function-names.ts';
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
  /**
   * One template to run, as an app of one stack (see `templates` for several).
   * @default every stack synthesized from `projectDir`'s cdk.json
   */
  readonly template?: CloudFormationTemplate | Readonly<Record<string, unknown>>;
  /**
   * Several templates to run as the stacks of one app (e.g. synthesized in-process by a test), instead of
   * `template`. They deploy in the order given, except that a stack importing another's export
   * (`Fn::ImportValue`) deploys after it. @default every stack synthesized from `projectDir`'s cdk.json
   */
  readonly templates?: readonly StackTemplate[];
  /**
   * A synthesis already under way, to run instead of synthesizing here: `npm start` starts it before it loads
   * the runtime, so the app's synthesis overlaps the runtime's own loading. Every stack it holds runs.
   */
  readonly synthesis?: Promise<SynthesizedApp>;
  /**
   * The one stack to run, of an app with several (its name, display name or artifact id); every other stack is
   * left out, and its functions keep the names they have when every stack runs (`<stack>/<path>`). The base of
   * the deployed name is the stack's name, `<stackName>-local`, which is never the name `cdk deploy` uses, so a
   * local run cannot replace a deployed stack. With `template`, the stack's name.
   * @default every stack of the app (with `template`: the stack named in its construct paths)
   */
  readonly stackName?: string;
  /** Where cdk.json is; handler entries and `.local/` are relative to it. @default process.cwd() */
  readonly projectDir?: string;
  /** Receives the runtime's own lines (failed batches, discarded records, handler errors). @default stderr */
  readonly log?: (line: string) => void;
  /** Receives moto's request log and warnings. @default dropped */
  readonly emulatorLog?: (line: string) => void;
  /**
   * Wraps or replaces handlers, by function name (`Outbox/Relay`; in an app of several stacks
   * `OutboxOrders/Outbox/Relay`, or the construct path alone when only one stack has it), e.g. to inject a
   * fault in a test.
   */
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

/** A template given to {@link LocalRuntimeOptions.templates}: one stack of the app. */
export interface StackTemplate {
  /** The stack's name; it is deployed as `<stackName>-local`. */
  readonly stackName: string;
  readonly template: CloudFormationTemplate | Readonly<Record<string, unknown>>;
  /** What its function names are qualified with, in an app of several stacks. @default stackName */
  readonly displayName?: string;
}

/** What a deploy did to a stack: created it, updated it in place, or kept it unchanged. */
export type DeploymentChange = 'created' | 'updated' | 'unchanged';

/** One stack of a running app. */
export interface RunningStack {
  /** The stack's name in the app (its CloudFormation name, as `cdk deploy` would use it). */
  readonly name: string;
  /** Its construct path (`OutboxOrders`): the prefix of its function names when the app has several stacks. */
  readonly displayName: string;
  /** The name it is deployed under on the backend, `<name>-local`. */
  readonly deployedName: string;
  readonly deployment: DeploymentChange;
  /** Its outputs. */
  readonly outputs: Readonly<Record<string, string>>;
  /** What it exports to the stacks deployed after it: export name → value. */
  readonly exports: ReadonlyMap<string, string>;
  /** Its resources, by logical id. */
  readonly resources: ReadonlyMap<string, DeployedResource>;
  /** Its part of the app, with the function names the runtime uses (qualified when the app has several stacks). */
  readonly app: AppDefinition;
}

/** How long each start-up step took, in milliseconds. */
export interface StartupTimings {
  /** From the start until the backend answered; it boots while the app is synthesized. */
  readonly backendMs: number;
  readonly synthMs: number;
  readonly deployMs: number;
  readonly totalMs: number;
}

/**
 * A running local runtime. In an app of several stacks, `app`, `outputs`, `resources`, `env`, `functions`,
 * `pollers` and `schedules` hold every stack's, and each stack's own are in `stacks`.
 */
export interface LocalRuntime {
  readonly backend: BackendKind;
  /**
   * The endpoint every SDK client of the handlers and pollers uses: on an emulator, a forwarder in front of it
   * that sends it DynamoDB transactions one at a time; on the embedded backend, the backend itself.
   */
  readonly endpoint: string;
  /** The backend's own endpoint, where the stacks were deployed. */
  readonly emulatorEndpoint: string;
  /** Process id of the moto server started for this run; `undefined` for the other backends. */
  readonly emulatorPid: number | undefined;
  /** Base URL of the REST API that serves every stack's routes, e.g. `http://127.0.0.1:3000`. */
  readonly apiUrl: string;
  /**
   * The deployed name (`<stack>-local`) of the app's only stack, or of the first of several (the first
   * deployed, which no other stack precedes); every stack's is in `stacks`.
   */
  readonly stackName: string;
  /**
   * What the deploy did: created the stack, updated it in place, or kept it unchanged. Of several stacks:
   * `created` when it created one, else `updated` when it updated one, else `unchanged`.
   */
  readonly deployment: DeploymentChange;
  /** Every stack of the run, in deployment order (one, for an app of one stack or a run of `stackName`). */
  readonly stacks: readonly RunningStack[];
  /**
   * The app as read from the templates: functions, mappings, routes, schedules, what is not run; every stack's
   * together (its `stackName` is then undefined).
   */
  readonly app: AppDefinition;
  /** Every stack's outputs, by name (two stacks never share an output name: that fails the start). */
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * The resources, by logical id; in an app of several stacks by `<stack display name>/<logical id>` (logical
   * ids repeat across stacks; each stack's own map, by logical id, is in `stacks`).
   */
  readonly resources: ReadonlyMap<string, DeployedResource>;
  /**
   * Each function's resolved environment, by function name. In an app of several stacks the construct path
   * alone also answers, when only one stack has a function there (not enumerated).
   */
  readonly env: Readonly<Record<string, FunctionEnvironment>>;
  /**
   * The functions, by name: `Outbox/Relay`, its construct path; in an app of several stacks
   * `OutboxOrders/Outbox/Relay`, `<stack display name>/<construct path>` (the construct path alone also
   * answers when only one stack has it; not enumerated).
   */
  readonly functions: Readonly<Record<string, LocalFunction>>;
  /** The stream and queue pollers, in deployment and template order. */
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
  /**
   * Invokes a function by name directly (as `aws lambda invoke` would): its name, or in an app of several
   * stacks its construct path when only one stack has it (`AMBIGUOUS_FUNCTION` when several do).
   */
  invoke(functionName: string, event: unknown): Promise<Invocation>;
  /**
   * Loads the functions' current code: the next invocations run it, in-flight ones finish on the old code; when
   * the code does not load, the old code keeps serving and the error is returned. Needs functionHost `process`.
   */
  reloadFunctions(): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: Error }>;
  /** Stops every poller and schedule after its current cycle (in-flight invocations finish first). */
  pausePollers(): Promise<void>;
  resumePollers(): void;
  /** Runs one poll cycle of every poller, in deployment and template order, ignoring batching windows. */
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
    const sources = await stackSources(options, projectDir);
    const synthMs = Date.now() - synthStarted;
    // Names are qualified in any app of several stacks, even when one runs alone: they, and the checkpoints
    // saved under them, stay the same whichever stacks run.
    const several = sources.stackCount > 1;
    const plans = planStacks(sources.stacks, several);
    const [firstPlan] = plans;
    if (firstPlan === undefined) throw new LocalRuntimeError('SYNTH_FAILED', 'the app has no stack to run');
    const app = several ? mergeApps(plans) : firstPlan.app;
    const names = functionNames(
      app.functions.map((fn) => fn.name),
      several ? plans.map((plan) => plan.displayName) : [],
    );
    const overrides = checkedOverrides(options.handlers, names);
    const hostKind = options.functionHost ?? DEFAULTS.functionHost;
    // Function hosts boot (Node, tsx) while the backend comes up and the stacks deploy.
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
        new LocalRuntimeError('DEPLOY_FAILED', 'the runtime stopped before the stacks were deployed'),
      );
      const started = await hostsStarting?.catch(() => undefined);
      await Promise.all((started?.hosts ?? []).map((host) => host.stop(DEFAULTS.idleTimeoutMs)));
    });
    const backend = await backendStarting;

    const deployStarted = Date.now();
    // One after another, in dependency order: a stack's imports must be exported before it deploys.
    const deployments: DeployedStack[] = [];
    for (const plan of plans) {
      deployments.push(await deployStack(backend, plan, plans));
    }
    const deployMs = Date.now() - deployStarted;
    const [first] = deployments;
    if (first === undefined) throw new LocalRuntimeError('SYNTH_FAILED', 'the app has no stack to run');

    // An emulator gets transactions one at a time (moto loses writes to concurrent ones); the embedded
    // backend's transactions are atomic already.
    const serializer =
      backend.kind === 'embedded'
        ? undefined
        : await startTransactionSerializer({ upstream: backend.endpoint });
    if (serializer !== undefined) cleanups.push(() => serializer.stop());
    const endpoint = serializer?.endpoint ?? backend.endpoint;
    const clientConfig = { ...emulatorClientConfig(endpoint), region: first.region };
    const clients = {
      dynamodb: new DynamoDBClient(clientConfig),
      streams: new DynamoDBStreamsClient(clientConfig),
      sqs: new SQSClient(clientConfig),
    };
    cleanups.push(async () => {
      for (const client of Object.values(clients)) client.destroy();
    });
    const stacks = await resolveStacks(plans, deployments, { clients, emulatorEndpoint: backend.endpoint });
    const outputs = Object.assign({}, ...stacks.map((stack) => stack.outputs)) as Record<string, string>;

    const shared = processEnvironment();
    cleanups.push(async () => shared.restore());
    const placements = new Map(
      stacks.flatMap((stack) =>
        stack.app.functions.map((definition) => [
          definition.name,
          { deployed: stack.deployed, context: stack.context, path: stack.pathOf(definition.name) },
        ]),
      ),
    );
    const loadOptions: LoadOptions = {
      placementOf: (name) => {
        const placement = placements.get(name);
        if (placement === undefined) throw new Error(`no stack holds function ${name}`);
        return placement;
      },
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
      let fn: LocalFunction | undefined;
      try {
        fn = functions.get(names.resolve(functionName));
      } catch (error) {
        return Promise.reject(error);
      }
      if (fn === undefined) return Promise.reject(unknownFunction(functionName, names));
      return fn.invoke(event);
    };

    const api = await startHttpApi({
      // Each route's events name its own stack's account.
      routes: stacks.flatMap((stack) =>
        stack.app.routes.map((route) => ({ ...route, accountId: stack.deployed.accountId })),
      ),
      port: options.port ?? DEFAULTS.port,
      invoke,
      accountId: first.accountId,
      log,
    });
    cleanups.push(() => api.close());

    const state =
      backend.dataLocation === undefined
        ? pollerState(choice, options.stateFile ?? join(projectDir, DEFAULTS.stateFile))
        : filePollerState(join(backend.dataLocation, 'poller-state.json'));
    const pollers: Poller[] = [];
    for (const stack of stacks) {
      pollers.push(
        ...(await createEventSourcePollers({
          mappings: stack.app.mappings,
          functions,
          context: stack.context,
          clients,
          // The emulator's own endpoint keys the saved checkpoints: the forwarder's port changes every run. The
          // function's name in the key tells two stacks' mappings of one source apart.
          endpoint: backend.stateKey ?? backend.endpoint,
          state,
          retryVisibilitySeconds: options.retryVisibilitySeconds,
          intervalMs: options.pollIntervalMs,
          log,
        })),
      );
    }
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
    const schedules = stacks.flatMap((stack) =>
      createSchedules(stack.app, { functions, context: stack.context, log }),
    );
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
      stackName: first.stackName,
      deployment: overallChange(stacks.map((stack) => stack.running.deployment)),
      stacks: stacks.map((stack) => stack.running),
      app,
      outputs,
      resources: several
        ? new Map(
            stacks.flatMap((stack) =>
              [...stack.running.resources].map(
                ([logicalId, resource]) =>
                  [qualifiedName(stack.running.displayName, logicalId), resource] as const,
              ),
            ),
          )
        : first.resources,
      env: names.withPaths(Object.fromEntries([...functions].map(([name, fn]) => [name, fn.env]))),
      functions: names.withPaths(Object.fromEntries(functions)),
      pollers,
      schedules,
      stateLocation: state.location,
      dataLocation: backend.dataLocation,
      clientConfig,
      timings: { backendMs, synthMs, deployMs, totalMs: Date.now() - started },
      functionNodes: names.withPaths(functionNodes),
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

/** The stacks to run, in deployment order: synthesized, given as templates, or the one template given. */
async function stackSources(options: LocalRuntimeOptions, projectDir: string): Promise<SynthesizedApp> {
  if (options.synthesis !== undefined) return options.synthesis;
  if (options.template !== undefined && options.templates !== undefined) {
    throw new LocalRuntimeError(
      'INVALID_OPTION',
      'give template (one stack) or templates (several), not both',
    );
  }
  if (options.templates !== undefined) {
    return {
      stacks: givenTemplates(options.templates, options.stackName),
      stackCount: options.templates.length,
    };
  }
  if (options.template !== undefined) {
    const template = asTemplate(options.template);
    const stackName = options.stackName ?? readApp(template).stackName ?? DEFAULTS.stackName;
    return { stacks: [{ stackName, displayName: stackName, template, dependencies: [] }], stackCount: 1 };
  }
  return synthesizeApp({
    projectDir,
    ...(options.stackName === undefined ? {} : { stackName: options.stackName }),
  });
}

/** The `templates` option as stacks in deployment order, or the one `stackName` names. */
function givenTemplates(templates: readonly StackTemplate[], wanted: string | undefined): SynthesizedStack[] {
  const given = templates.map((entry) => ({
    stackName: entry.stackName,
    displayName: entry.displayName ?? entry.stackName,
    template: asTemplate(entry.template),
  }));
  const names = given.map((stack) => stack.stackName);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) {
    throw new LocalRuntimeError('INVALID_OPTION', `templates names the stack ${repeated} twice`);
  }
  const dependencies = importDependencies(given);
  const ordered = deploymentOrder(
    given.map((stack) => ({ ...stack, dependencies: dependencies.get(stack.stackName) ?? [] })),
  );
  if (wanted === undefined) {
    if (ordered.length === 0) throw new LocalRuntimeError('INVALID_OPTION', 'templates holds no template');
    return ordered;
  }
  const picked = ordered.find((stack) => stack.stackName === wanted || stack.displayName === wanted);
  if (picked === undefined) {
    throw new LocalRuntimeError(
      'INVALID_OPTION',
      `templates has no stack ${wanted} (stacks: ${names.join(', ') || 'none'})`,
    );
  }
  return [picked];
}

/** A stack about to run: its template, and its part of the app, named as the runtime names it. */
interface StackPlan {
  readonly stackName: string;
  readonly displayName: string;
  readonly template: CloudFormationTemplate;
  /** Names of the app's stacks it depends on. */
  readonly dependencies: readonly string[];
  readonly app: AppDefinition;
  /** A function's construct path in the stack, from its name in the runtime. */
  readonly pathOf: (functionName: string) => string;
}

/** Each stack read; in an app of several stacks, its names qualified by its display name. */
function planStacks(sources: readonly SynthesizedStack[], several: boolean): StackPlan[] {
  return sources.map((source) => {
    const own = readApp(source.template);
    const prefix = several ? qualifiedName(source.displayName, '') : '';
    return {
      stackName: source.stackName,
      displayName: source.displayName,
      template: source.template,
      dependencies: source.dependencies,
      app: several ? qualifyApp(own, source.displayName) : own,
      pathOf: (functionName) => functionName.slice(prefix.length),
    };
  });
}

/** A deployed stack with what the runtime resolves its values against. */
interface ResolvedStack extends StackPlan {
  readonly deployed: DeployedStack;
  readonly context: ResolutionContext;
  readonly outputs: Readonly<Record<string, string>>;
  readonly running: RunningStack;
}

/**
 * Each deployed stack's resolution context, outputs and exports, in deployment order: a stack's imports
 * resolve against the exports of the stacks before it, and of stacks the backend holds from an earlier run.
 */
async function resolveStacks(
  plans: readonly StackPlan[],
  deployments: readonly DeployedStack[],
  sources: { readonly clients: BackendClients; readonly emulatorEndpoint: string },
): Promise<ResolvedStack[]> {
  const exported = new Map<string, string>();
  let earlier: ReadonlyMap<string, string> | undefined;
  const resolved: ResolvedStack[] = [];
  for (const [index, plan] of plans.entries()) {
    const deployed = deployments[index];
    if (deployed === undefined) continue;
    if (earlier === undefined && importedNames(plan.template).some((name) => !exported.has(name))) {
      earlier = await backendExports(sources.emulatorEndpoint);
    }
    const available = new Map([...(earlier ?? []), ...exported]);
    // As CloudFormation refuses it: an import no stack exports fails the start, even where only the backend
    // would read it (the embedded backend does not resolve an IAM policy's document).
    const unknown = importedNames(plan.template).filter((name) => !available.has(name));
    if (unknown.length > 0) {
      const missing = leftOut(plan, plans);
      throw new LocalRuntimeError(
        'DEPLOY_FAILED',
        `${missing === '' ? '' : `${missing}: `}stack ${plan.stackName} imports ${unknown.join(', ')}, ` +
          'which no stack deployed before it exports',
      );
    }
    const context = await stackContext(deployed, {
      template: plan.template,
      clients: sources.clients,
      exports: available,
    });
    const outputs = stackOutputs(deployed, plan.template, context);
    const exports = stackExports(plan.template, context);
    for (const [name, value] of exports) exported.set(name, value);
    resolved.push({
      ...plan,
      deployed,
      context,
      outputs,
      running: {
        name: plan.stackName,
        displayName: plan.displayName,
        deployedName: deployed.stackName,
        deployment: deployed.change ?? 'created',
        outputs,
        exports,
        resources: deployed.resources,
        app: plan.app,
      },
    });
  }
  return resolved;
}

/**
 * Deploys one stack as `<stackName>-local`. When it fails and the stack depends on stacks this run leaves out
 * (`stackName` picked it alone), the error says so: their exports may be what is missing.
 */
async function deployStack(
  backend: Backend,
  plan: StackPlan,
  plans: readonly StackPlan[],
): Promise<DeployedStack> {
  try {
    return await backend.deploy(plan.template, `${plan.stackName}-local`);
  } catch (error) {
    const missing = leftOut(plan, plans);
    if (missing === '') throw error;
    throw new LocalRuntimeError(
      'DEPLOY_FAILED',
      `${missing}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** What a stack depends on that the run leaves out, as the start of an error; empty when nothing is. */
function leftOut(plan: StackPlan, plans: readonly StackPlan[]): string {
  const missing = plan.dependencies.filter((name) => !plans.some((other) => other.stackName === name));
  if (missing.length === 0) return '';
  return (
    `${plan.stackName} depends on ${missing.join(', ')}, which this run does not deploy (it runs ` +
    `${plan.stackName} alone); run every stack, or deploy ${missing.join(', ')} to this backend first`
  );
}

/** What the deploy of several stacks did, as one word: see {@link LocalRuntime.deployment}. */
function overallChange(changes: readonly DeploymentChange[]): DeploymentChange {
  if (changes.includes('created')) return 'created';
  return changes.includes('updated') ? 'updated' : 'unchanged';
}

/**
 * The overrides by the runtime's function names, after checking that each names a function the runtime runs (a
 * typo must not pass silently) and names one only.
 */
function checkedOverrides(
  handlers: Readonly<Record<string, HandlerOverride>> | undefined,
  names: FunctionNames,
): ReadonlyMap<string, HandlerOverride> {
  const overrides = new Map<string, HandlerOverride>();
  for (const [given, override] of Object.entries(handlers ?? {})) {
    const name = names.resolve(given);
    if (overrides.has(name)) {
      throw new LocalRuntimeError('INVALID_OPTION', `two handler overrides name the function ${name}`);
    }
    overrides.set(name, override);
  }
  return overrides;
}

function unknownFunction(name: string, names: FunctionNames): LocalRuntimeError {
  return new LocalRuntimeError(
    'UNKNOWN_FUNCTION',
    `no function ${name} runs locally (functions: ${names.names.join(', ') || 'none'})`,
  );
}

/** Where a function runs: its stack as deployed, what its values resolve against, its construct path. */
interface FunctionPlacement {
  readonly deployed: DeployedStack;
  readonly context: ResolutionContext;
  readonly path: string;
}

interface LoadOptions {
  readonly placementOf: (functionName: string) => FunctionPlacement;
  readonly endpoint: string;
  readonly logLevel: string;
  readonly projectDir: string;
  readonly overrides: ReadonlyMap<string, HandlerOverride>;
  readonly processEnv: ReturnType<typeof processEnvironment>;
  readonly log: (line: string) => void;
}

/** A function's name and ARN on the backend, and its resolved environment. */
function functionTarget(
  definition: FunctionDefinition,
  options: LoadOptions,
): { readonly env: FunctionEnvironment; readonly physicalName: string; readonly arn: string } {
  const { deployed, context, path } = options.placementOf(definition.name);
  const { region, accountId, stackName } = context;
  // A backend that does not model functions (the embedded one) has no name for them: name them as
  // CloudFormation would, after the stack and the construct.
  const physicalName =
    deployed.resources.get(definition.logicalId)?.physicalId || `${stackName}-${path.replaceAll('/', '-')}`;
  return {
    env: functionEnvironment(definition, {
      endpoint: options.endpoint,
      context,
      physicalName,
      logLevel: options.logLevel,
    }),
    physicalName,
    arn: `arn:${context.partition ?? 'aws'}:lambda:${region}:${accountId}:function:${physicalName}`,
  };
}

/** Loads the functions one after another: a plain handler's variables are in process.env while it is imported. */
async function loadFunctions(app: AppDefinition, options: LoadOptions): Promise<Map<string, LocalFunction>> {
  const functions = new Map<string, LocalFunction>();
  for (const definition of app.functions) {
    const fn = await loadLocalFunction(definition, {
      ...functionTarget(definition, options),
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
    /** The load options, known once the stacks are deployed; the hosts boot meanwhile. */
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
    return definitions.map((definition) => ({ definition, ...functionTarget(definition, loadOptions) }));
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
