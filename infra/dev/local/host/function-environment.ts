/**
 * A function's environment in the local runtime: its template `Environment.Variables` resolved against the
 * deployed stack, plus what Lambda itself sets (region, function name, memory) and what the emulator needs
 * (its endpoint, dummy credentials).
 */
import { EMULATOR_CREDENTIALS } from '../backends/emulator-config.ts';
import { type ResolutionContext, resolveString } from '../template/intrinsics.ts';
import type { FunctionDefinition } from '../template/read-functions.ts';

/** A function's resolved environment variables. */
export type FunctionEnvironment = Readonly<Record<string, string>>;

/** What a function's environment is resolved from. */
export interface EnvironmentSources {
  /** The backend endpoint every SDK client of the handlers must use. */
  readonly endpoint: string;
  readonly context: ResolutionContext;
  /** The function's name on the backend (the Lambda context's `functionName`). */
  readonly physicalName: string;
  /**
   * Powertools log level of every handler, over the template's: a local console stays readable at WARN.
   * @default the template's POWERTOOLS_LOG_LEVEL, else unset
   */
  readonly logLevel?: string;
}

/** Variables Lambda sets for one function; they differ per function, so they never go into process.env. */
export const PER_FUNCTION_VARIABLES: ReadonlySet<string> = new Set([
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_LOG_GROUP_NAME',
]);

/**
 * The environment `definition` runs with; throws `UNRESOLVABLE_VALUE` naming the variable it cannot resolve.
 * @example
 * const env = functionEnvironment(app.functions[0], { endpoint, context, physicalName: 'NotesApp-local-Writer-1' });
 */
export function functionEnvironment(
  definition: FunctionDefinition,
  sources: EnvironmentSources,
): FunctionEnvironment {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(definition.environment)) {
    env[name] = resolveString(value, sources.context, `function ${definition.name}, variable ${name}`);
  }
  if (sources.logLevel !== undefined) env.POWERTOOLS_LOG_LEVEL = sources.logLevel;
  // Metrics go to stdout as embedded-metric-format lines that only CloudWatch reads: locally they would bury the
  // console. A template that sets the variable keeps its value.
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // What Lambda sets wins over the template, as on AWS (these names are reserved there).
  return {
    ...env,
    AWS_ENDPOINT_URL: sources.endpoint,
    AWS_REGION: sources.context.region,
    AWS_DEFAULT_REGION: sources.context.region,
    AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
    AWS_LAMBDA_FUNCTION_NAME: sources.physicalName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(definition.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${sources.physicalName}`,
  };
}
