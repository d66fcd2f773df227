import { type CloudFormationClient, paginateListStacks } from '@aws-sdk/client-cloudformation';
import { ConfigError, describeError } from '../errors.ts';

/** The suffix `npm start` gives the stack it deploys to an emulator (`<stack>-local`). */
export const LOCAL_STACK_SUFFIX = '-local';

/**
 * The stack to work on: `--stack` when given; against an emulator (`AWS_ENDPOINT_URL`), the one stack named
 * `<stack>-local` there (what `npm start` deploys); otherwise a {@link ConfigError} asking for `--stack`.
 * @example
 * const stackName = await chooseStackName(cloudFormation, { stack: options.stack, endpoint: env.AWS_ENDPOINT_URL });
 */
export async function chooseStackName(
  client: CloudFormationClient,
  given: { readonly stack?: string; readonly endpoint?: string },
): Promise<string> {
  if (given.stack !== undefined && given.stack.trim() !== '') return given.stack.trim();
  if (given.endpoint === undefined) {
    throw new ConfigError('--stack is required: the name of the CloudFormation stack that holds the outbox');
  }
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
      `cannot list the stacks of the emulator at ${given.endpoint} (is npm start running?): ${describeError(cause)}`,
      { cause },
    );
  }
  const [only, other] = names;
  if (only !== undefined && other === undefined) return only;
  throw new ConfigError(
    names.length === 0
      ? `no stack named *${LOCAL_STACK_SUFFIX} on the emulator at ${given.endpoint} (start it with npm start, or give --stack)`
      : `several local stacks on the emulator at ${given.endpoint} (${names.join(', ')}): choose one with --stack`,
  );
}
