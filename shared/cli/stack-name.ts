import { type CloudFormationClient, paginateListStacks } from '@aws-sdk/client-cloudformation';
import { ConfigError, describeError } from '../errors.ts';

/** The suffix `npm start` gives the stack it deploys to an emulator (`<stack>-local`). */
export const LOCAL_STACK_SUFFIX = '-local';

/** What a stack holds, as far as choosing one goes: an outbox, or else what to call it in a list of stacks. */
export interface StackLabel {
  readonly holdsOutbox: boolean;
  /** How a list of stacks names what it is: `outbox`, `subscriber inventory`, `no outbox`. */
  readonly label: string;
}

/**
 * The stack to work on: `--stack` when given; against an emulator (`AWS_ENDPOINT_URL`), the one stack named
 * `<stack>-local` there (what `npm start` deploys), or — when there are several (a producer and its subscribers,
 * each in its own stack) and `labelOf` tells them apart — the one of them holding an outbox; otherwise a
 * {@link ConfigError} asking for `--stack`, naming the local stacks and what each holds.
 * @example
 * const stackName = await chooseStackName(cloudFormation, { stack: options.stack, endpoint: env.AWS_ENDPOINT_URL });
 */
export async function chooseStackName(
  client: CloudFormationClient,
  given: {
    readonly stack?: string;
    readonly endpoint?: string;
    /** What a stack holds (its template's metadata), to pick the one holding an outbox among several. */
    readonly labelOf?: (stackName: string) => Promise<StackLabel>;
  },
): Promise<string> {
  if (given.stack !== undefined && given.stack.trim() !== '') return given.stack.trim();
  if (given.endpoint === undefined) {
    throw new ConfigError('--stack is required: the name of the CloudFormation stack that holds the outbox');
  }
  const names = await localStackNames(client, given.endpoint);
  const [only, other] = names;
  if (only !== undefined && other === undefined) return only;
  if (names.length === 0) {
    throw new ConfigError(
      `no stack named *${LOCAL_STACK_SUFFIX} on the emulator at ${given.endpoint} (start it with npm start, or give --stack)`,
    );
  }
  const { labelOf } = given;
  if (labelOf === undefined) {
    throw new ConfigError(
      `several local stacks on the emulator at ${given.endpoint} (${names.join(', ')}): choose one with --stack`,
    );
  }
  const labels = await Promise.all(names.map(labelOf));
  const outboxes = names.filter((_, n) => labels[n]?.holdsOutbox === true);
  const [producer, another] = outboxes;
  if (producer !== undefined && another === undefined) return producer;
  const listed = names.map((name, n) => `${name} (${labels[n]?.label ?? 'unknown'})`).join(', ');
  throw new ConfigError(
    `${outboxes.length === 0 ? 'none' : 'more than one'} of the local stacks on the emulator at ${given.endpoint} holds an outbox: ${listed}; choose one with --stack`,
  );
}

/**
 * The stacks named `<stack>-local` on the emulator at `endpoint` (what `npm start` deploys), deleted ones left out.
 * Throws a {@link ConfigError} saying what is wrong with the endpoint when it cannot list them.
 */
export async function localStackNames(client: CloudFormationClient, endpoint: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const page of paginateListStacks({ client }, {})) {
      for (const stack of page.StackSummaries ?? []) {
        if (stack.StackStatus === 'DELETE_COMPLETE' || stack.StackName === undefined) continue;
        if (stack.StackName.endsWith(LOCAL_STACK_SUFFIX)) names.push(stack.StackName);
      }
    }
  } catch (cause) {
    throw new ConfigError(
      `cannot list the stacks at ${endpoint} (CloudFormation ListStacks): ${endpointProblem(endpoint, cause)}`,
      { cause },
    );
  }
  return names;
}

/**
 * What went wrong talking to the CloudFormation API at an emulator's endpoint, in words, with what to do: nothing
 * answers there, something answers that is not CloudFormation, or CloudFormation refused the request.
 */
export function endpointProblem(endpoint: string, cause: unknown): string {
  const text = describeError(cause);
  const code = errorCode(cause);
  if (code !== undefined && UNREACHABLE.has(code)) {
    return (
      `nothing answers at ${endpoint} (${code}). Start the local runtime with npm start and use the ` +
      'AWS_ENDPOINT_URL it prints on its "operate it" line, or point AWS_ENDPOINT_URL at an emulator that runs'
    );
  }
  if (/XML|parse|Deserializ|Unexpected token|char \d+/i.test(text)) {
    return (
      `${endpoint} answers HTTP, but not as CloudFormation does (${firstLine(text)}). AWS_ENDPOINT_URL must ` +
      'name an AWS emulator with a CloudFormation API: the endpoint npm start prints on its "operate it" line, ' +
      'moto, or LocalStack'
    );
  }
  return `CloudFormation at ${endpoint} refused the request: ${firstLine(text)}`;
}

/** Network errors that mean nothing listens at the endpoint. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors[0] instanceof Error) {
      const inner = (errors[0] as { code?: unknown }).code;
      if (typeof inner === 'string') return inner;
    }
    current = current.cause;
  }
  return undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
