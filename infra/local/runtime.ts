/**
 * The local runtime: the app's synthesized template deployed to an emulator (a fresh moto unless one is
 * named), the handlers running in this process behind a local REST API, and pollers standing in for the
 * event source mappings (DESIGN §5). `npm start` and the integration tests both run on it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SQSClient } from '@aws-sdk/client-sqs';
import { synthExampleTemplate } from '../synth-template.ts';
import {
  type FunctionKey,
  type FunctionSpec,
  queueOutputName,
  tableOutputName,
  topology,
} from '../topology.ts';
import { deployToEmulator } from './deploy-template.ts';
import { EMULATOR_REGION, type EmulatorClientConfig, emulatorClientConfig } from './emulator-config.ts';
import { asTemplate, type CloudFormationTemplate } from './emulator-template.ts';
import { type FunctionEnvironment, functionEnvironments, requireOutput } from './environment.ts';
import { startHttpApi } from './http-api.ts';
import {
  type HandlerOverride,
  type Invocation,
  type LocalFunction,
  loadLocalFunction,
} from './local-function.ts';
import { type Emulator, findFreePort, resolveEmulator, startMotoServer } from './moto-server.ts';
import type { CycleResult, Poller } from './poll-loop.ts';
import { createQueuePoller } from './queue-poller.ts';
import { createScheduleRunner, scheduleRateSeconds } from './schedule-runner.ts';
import { DEFAULT_STOCK, type StockSeed, seedStock } from './seed-stock.ts';
import { createStreamPoller } from './stream-poller.ts';

/** Options of {@link startLocalRuntime}; every field is optional. */
export interface LocalRuntimeOptions {
  /** Port of the local REST API on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** An emulator to deploy to instead of a fresh moto. @default env.AWS_ENDPOINT_URL, else a fresh moto */
  readonly endpoint?: string;
  /** Receives the runtime's own lines (failed batches, discarded records, handler errors). @default stderr */
  readonly log?: (line: string) => void;
  /** Receives moto's request log and warnings. @default dropped */
  readonly emulatorLog?: (line: string) => void;
  /** Put starting stock in the inventory table: `true` for {@link DEFAULT_STOCK}, or a list. @default true */
  readonly seed?: boolean | readonly StockSeed[];
  /** Wrap or replace a function's handler, e.g. to inject a fault in a test. */
  readonly handlers?: Partial<Record<FunctionKey, HandlerOverride>>;
  /** Create the pollers paused; start them with {@link LocalRuntime.resumePollers}. @default false */
  readonly pollersPaused?: boolean;
  /** Pause between idle polls. @default 250 (Lambda polls streams four times a second) */
  readonly pollIntervalMs?: number;
  /** Visibility timeout for messages of a failed consumer batch (faster redelivery in tests). @default the queue's */
  readonly retryVisibilitySeconds?: number;
  /** Powertools log level of the handlers. @default env.LOG_LEVEL, else 'WARN' */
  readonly logLevel?: string;
  /** The template to deploy. @default synthExampleTemplate({ emulator: true }) */
  readonly template?: CloudFormationTemplate;
  /** Where AWS_ENDPOINT_URL and LOG_LEVEL are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** How long each start-up step took, in milliseconds. */
export interface StartupTimings {
  /** From the start until the emulator answered; moto boots during synthesis, so this includes it. */
  readonly emulatorMs: number;
  readonly synthMs: number;
  readonly deployMs: number;
  readonly totalMs: number;
}

/** A running local runtime. */
export interface LocalRuntime {
  /** The emulator's endpoint. */
  readonly endpoint: string;
  /** Process id of the moto server started for this run; `undefined` for an external emulator. */
  readonly emulatorPid: number | undefined;
  /** Base URL of the REST API, e.g. `http://127.0.0.1:3000`. */
  readonly apiUrl: string;
  readonly stackName: string;
  /** The stack's outputs: table names, queue URLs. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Each function's resolved environment. */
  readonly env: Readonly<Record<FunctionKey, FunctionEnvironment>>;
  readonly functions: Readonly<Record<FunctionKey, LocalFunction>>;
  /** The stream and queue pollers, in topology order. */
  readonly pollers: readonly Poller[];
  /** Timers of the scheduled functions (paused, resumed and stopped with the pollers; not drained). */
  readonly schedules: readonly Poller[];
  /** SDK client settings for the emulator (endpoint, region, dummy credentials), for tests' own clients. */
  readonly clientConfig: EmulatorClientConfig;
  readonly timings: StartupTimings;
  /** Invokes a function directly (as `aws lambda invoke` would). */
  invoke(key: FunctionKey, event: unknown): Promise<Invocation>;
  /** Stops every poller and schedule after its current cycle (in-flight invocations finish first). */
  pausePollers(): Promise<void>;
  resumePollers(): void;
  /** Runs one poll cycle of every poller, in topology order, ignoring batching windows. */
  pollOnce(): Promise<number>;
  /**
   * Polls until a full round of every poller finds nothing waiting (failing batches are retried, as far as
   * their retry settings allow); handy after pausing. Throws {@link DrainTimeoutError} when it does not settle.
   */
  drain(options?: { readonly timeoutMs?: number }): Promise<void>;
  /** Stops pollers (awaiting in-flight invocations), the REST API and the emulator this run started. */
  stop(): Promise<void>;
}

/** The runtime did not settle within the time given to {@link LocalRuntime.drain}. */
export class DrainTimeoutError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

const DEFAULTS = { port: 3000, logLevel: 'WARN', drainTimeoutMs: 30_000, idleTimeoutMs: 10_000 } as const;

/**
 * Starts the whole example locally and resolves once the API answers and the pollers run.
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
  const started = Date.now();
  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => log(`[local] clean-up failed: ${String(error)}`));
    }
  };

  try {
    // moto takes a second or two to boot and synthesis is CPU-bound: spawn moto first (startMotoServer
    // spawns before its first await when given a port) and synthesize while it boots.
    const external = options.endpoint ?? nonEmpty(env.AWS_ENDPOINT_URL);
    const emulatorStarting: Promise<Emulator> =
      external === undefined
        ? startMotoServer({ port: await findFreePort(), log: options.emulatorLog })
        : resolveEmulator({ AWS_ENDPOINT_URL: external });
    const stopEmulator = async (): Promise<void> => (await emulatorStarting).stop();
    cleanups.push(stopEmulator);
    const synthStarted = Date.now();
    const template = options.template ?? asTemplate(synthExampleTemplate({ emulator: true }));
    const synthMs = Date.now() - synthStarted;
    const emulator = await emulatorStarting;
    const emulatorMs = Date.now() - started;

    const deployStarted = Date.now();
    const { stackName, outputs } = await deployToEmulator({ endpoint: emulator.endpoint, template });
    const deployMs = Date.now() - deployStarted;

    const clientConfig = emulatorClientConfig(emulator.endpoint);
    const clients = {
      dynamodb: new DynamoDBClient(clientConfig),
      streams: new DynamoDBStreamsClient(clientConfig),
      sqs: new SQSClient(clientConfig),
    };
    cleanups.push(async () => {
      for (const client of Object.values(clients)) client.destroy();
    });

    const seed = options.seed ?? true;
    if (seed !== false) {
      const inventoryTable = requireOutput(outputs, tableOutputName('inventory'), 'the stock seed');
      await seedStock(clients.dynamodb, inventoryTable, seed === true ? DEFAULT_STOCK : seed);
    }

    const environments = functionEnvironments({
      endpoint: emulator.endpoint,
      outputs,
      logLevel: options.logLevel ?? nonEmpty(env.LOG_LEVEL) ?? DEFAULTS.logLevel,
    });
    const functions = await loadFunctions(environments, options.handlers, log);
    cleanups.push(async () => {
      await Promise.race([
        Promise.all(Object.values(functions).map((fn) => fn.idle())),
        new Promise((resolve) => setTimeout(resolve, DEFAULTS.idleTimeoutMs).unref()),
      ]);
    });

    const api = await startHttpApi({
      routes: topology.routes,
      port: options.port ?? DEFAULTS.port,
      invoke: (key, event) => functions[key].invoke(event),
      log,
    });
    cleanups.push(() => api.close());

    const pollers = createPollers(functions, outputs, clients, options, log);
    const schedules = createSchedules(functions, log);
    const everything = [...pollers, ...schedules];
    cleanups.push(async () => {
      // Tell running handlers time is up first, so a sweeper run ends now rather than at its deadline.
      for (const fn of Object.values(functions)) fn.wrapUp();
      await Promise.all(everything.map((poller) => poller.stop()));
    });
    for (const poller of everything) {
      if (options.pollersPaused === true) await poller.pause();
      poller.start();
    }

    let stopping: Promise<void> | undefined;
    return {
      endpoint: emulator.endpoint,
      emulatorPid: emulator.pid,
      apiUrl: api.url,
      stackName,
      outputs,
      env: environments,
      functions,
      pollers,
      schedules,
      clientConfig,
      timings: { emulatorMs, synthMs, deployMs, totalMs: Date.now() - started },
      invoke: (key, event) => functions[key].invoke(event),
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
          if (Date.now() > deadline) throw new DrainTimeoutError(`pollers still busy after ${timeoutMs} ms`);
          results.length = 0;
          for (const poller of pollers) results.push(await poller.pollOnce());
        } while (results.some((result) => !result.idle));
      },
      stop() {
        // Pollers first (they may be mid-invocation), then the API, then the emulator they all talk to.
        stopping ??= cleanUp();
        return stopping;
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

async function loadFunctions(
  environments: Readonly<Record<FunctionKey, FunctionEnvironment>>,
  overrides: Partial<Record<FunctionKey, HandlerOverride>> | undefined,
  log: (line: string) => void,
): Promise<Record<FunctionKey, LocalFunction>> {
  const entries = Object.entries(topology.functions) as [FunctionKey, FunctionSpec][];
  const loaded = await Promise.all(
    entries.map(([key, spec]) =>
      loadLocalFunction(key, spec, environments[key], { override: overrides?.[key] }),
    ),
  );
  for (const fn of loaded) {
    if (fn.initError !== undefined) log(`[local] ${fn.key} cannot run: ${fn.initError.message}`);
  }
  return Object.fromEntries(loaded.map((fn) => [fn.key, fn])) as Record<FunctionKey, LocalFunction>;
}

function createPollers(
  functions: Readonly<Record<FunctionKey, LocalFunction>>,
  outputs: Readonly<Record<string, string>>,
  clients: { dynamodb: DynamoDBClient; streams: DynamoDBStreamsClient; sqs: SQSClient },
  options: LocalRuntimeOptions,
  log: (line: string) => void,
): Poller[] {
  const pollers: Poller[] = [];
  for (const fn of Object.values(functions)) {
    const { streamSource, queueSource } = fn.spec;
    if (streamSource !== undefined) {
      pollers.push(
        createStreamPoller({
          fn,
          source: streamSource,
          tableName: requireOutput(outputs, tableOutputName(streamSource.table), `${fn.key}'s stream`),
          failureQueueUrl: requireOutput(
            outputs,
            queueOutputName(streamSource.onFailureQueue),
            `${fn.key}'s on-failure destination`,
          ),
          clients,
          intervalMs: options.pollIntervalMs,
          log,
        }),
      );
    }
    if (queueSource !== undefined) {
      pollers.push(
        createQueuePoller({
          fn,
          source: queueSource,
          queueUrl: requireOutput(outputs, queueOutputName(queueSource.queue), `${fn.key}'s queue`),
          sqs: clients.sqs,
          region: EMULATOR_REGION,
          retryVisibilitySeconds: options.retryVisibilitySeconds,
          intervalMs: options.pollIntervalMs,
          log,
        }),
      );
    }
  }
  return pollers;
}

function createSchedules(
  functions: Readonly<Record<FunctionKey, LocalFunction>>,
  log: (line: string) => void,
): Poller[] {
  const schedules: Poller[] = [];
  for (const fn of Object.values(functions)) {
    const rateSeconds = scheduleRateSeconds(fn.spec);
    if (rateSeconds !== undefined) schedules.push(createScheduleRunner({ fn, rateSeconds, log }));
  }
  return schedules;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
