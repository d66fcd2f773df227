/**
 * Each function's environment on the emulator, resolved from the topology's `EnvValue` entries and the
 * deployed stack's outputs, the same sources CDK resolves them from on AWS.
 */
import {
  deadLetterQueueOutputName,
  type EnvValue,
  type FunctionKey,
  type FunctionSpec,
  type QueueKey,
  queueOutputName,
  tableOutputName,
  topology,
} from '../topology.ts';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from './emulator-config.ts';

/** A function's resolved environment variables. */
export type FunctionEnvironment = Readonly<Record<string, string>>;

/** What a function's environment is resolved from. */
export interface EnvironmentSources {
  /** The emulator endpoint every SDK client of the handlers must use. */
  readonly endpoint: string;
  /** The deployed stack's outputs. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Powertools log level of the handlers. @default 'WARN' (keeps the console readable) */
  readonly logLevel?: string;
}

/** A stack output the topology relies on is missing. */
export class MissingOutputError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

const DEFAULTS = { logLevel: 'WARN' } as const;

/** The value of stack output `name`, or a {@link MissingOutputError} saying who needed it. */
export function requireOutput(
  outputs: Readonly<Record<string, string>>,
  name: string,
  neededBy: string,
): string {
  const value = outputs[name];
  if (value === undefined || value === '') {
    const known = Object.keys(outputs).sort().join(', ') || 'none';
    throw new MissingOutputError(
      `stack output ${name} (needed by ${neededBy}) is missing; outputs: ${known}`,
    );
  }
  return value;
}

/** The relay's routing table as JSON: each topic of the topology's queues → that queue's URL. */
export function topicRoutesJson(outputs: Readonly<Record<string, string>>, neededBy: string): string {
  const routes: Record<string, string> = {};
  for (const [queue, spec] of Object.entries(topology.queues) as [
    QueueKey,
    (typeof topology.queues)[QueueKey],
  ][]) {
    for (const topic of spec.topics) routes[topic] = requireOutput(outputs, queueOutputName(queue), neededBy);
  }
  return JSON.stringify(routes);
}

/** One `EnvValue` of the topology, resolved against the stack outputs. */
export function resolveEnvValue(
  value: EnvValue,
  outputs: Readonly<Record<string, string>>,
  neededBy: string,
): string {
  if ('tableName' in value) return requireOutput(outputs, tableOutputName(value.tableName), neededBy);
  if ('queueUrl' in value) return requireOutput(outputs, queueOutputName(value.queueUrl), neededBy);
  if ('deadLetterQueueUrl' in value) {
    return requireOutput(outputs, deadLetterQueueOutputName(value.deadLetterQueueUrl), neededBy);
  }
  if ('topicRoutes' in value) return topicRoutesJson(outputs, neededBy);
  if ('tableNamesByTopic' in value) {
    return JSON.stringify(
      Object.fromEntries(
        Object.entries(value.tableNamesByTopic).map(([topic, table]) => [
          topic,
          requireOutput(outputs, tableOutputName(table), neededBy),
        ]),
      ),
    );
  }
  return value.literal;
}

/**
 * The environment of function `key` on the emulator: its topology variables plus the endpoint, region,
 * dummy credentials and Powertools settings a Lambda would get from the runtime and CDK.
 * @example
 * const env = functionEnvironment('createOrder', topology.functions.createOrder, { endpoint, outputs });
 */
export function functionEnvironment(
  key: FunctionKey,
  spec: FunctionSpec,
  sources: EnvironmentSources,
): FunctionEnvironment {
  const env: Record<string, string> = {
    AWS_ENDPOINT_URL: sources.endpoint,
    AWS_REGION: EMULATOR_REGION,
    AWS_DEFAULT_REGION: EMULATOR_REGION,
    AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    AWS_LAMBDA_FUNCTION_NAME: localFunctionName(key),
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
    POWERTOOLS_SERVICE_NAME: serviceName(key),
    POWERTOOLS_LOG_LEVEL: sources.logLevel ?? DEFAULTS.logLevel,
  };
  for (const [name, value] of Object.entries(spec.environment)) {
    env[name] = resolveEnvValue(value, sources.outputs, `${key}.${name}`);
  }
  return env;
}

/** Every topology function's environment on the emulator. */
export function functionEnvironments(
  sources: EnvironmentSources,
): Readonly<Record<FunctionKey, FunctionEnvironment>> {
  const environments = {} as Record<FunctionKey, FunctionEnvironment>;
  for (const [key, spec] of Object.entries(topology.functions) as [FunctionKey, FunctionSpec][]) {
    environments[key] = functionEnvironment(key, spec, sources);
  }
  return environments;
}

/** The name a function goes by locally (Lambda context, logs): the stack name and the topology key. */
export function localFunctionName(key: FunctionKey): string {
  return `${topology.stackName}-${key}`;
}

/** A function's Powertools service name: its topology key in kebab case (`createOrder` → `create-order`). */
export function serviceName(key: FunctionKey): string {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
