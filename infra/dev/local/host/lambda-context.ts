/** A Lambda `Context` for in-process invocations, with the deadline the function's timeout gives it. */
import type { Context } from 'aws-lambda';
import { EMULATOR_REGION } from '../backends/emulator-config.ts';

/** What a local invocation's context is made from. */
export interface LambdaContextOptions {
  readonly functionName: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly requestId: string;
  /** When the invocation started, in ms since the epoch (`Date.now()`). */
  readonly startedAt: number;
  /** The clock `getRemainingTimeInMillis` reads. @default Date.now */
  readonly now?: () => number;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** @default '123456789012', the emulators' account */
  readonly accountId?: string;
  /** @default built from the function name, region and account */
  readonly invokedFunctionArn?: string;
}

/** A minimal but complete Lambda context for one invocation. */
export function lambdaContext(options: LambdaContextOptions): Context {
  const now = options.now ?? Date.now;
  const deadline = options.startedAt + options.timeoutSeconds * 1000;
  const region = options.region ?? EMULATOR_REGION;
  const unsupported = (name: string) => (): never => {
    throw new Error(`context.${name}() is a Node 0.10 callback API; return a promise instead`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn:
      options.invokedFunctionArn ??
      `arn:aws:lambda:${region}:${options.accountId ?? '123456789012'}:function:${options.functionName}`,
    memoryLimitInMB: String(options.memoryMb),
    awsRequestId: options.requestId,
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `local/[$LATEST]${options.requestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
