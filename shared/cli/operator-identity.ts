import { userInfo } from 'node:os';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import type { AwsClientConfig } from '../aws/clients.ts';

/** Asks AWS who the caller is (STS GetCallerIdentity) and answers with the caller's ARN. */
export type CallerIdentity = () => Promise<string>;

/**
 * Who the audit trail names as the operator: against an emulator `local:<os user>`; on AWS the caller's ARN
 * from `callerIdentity` (STS). Without an STS client the ARN is not known, so the actor says what it is —
 * `unverified:<AWS_PROFILE or default>:<os user>` — rather than passing for an IAM identity.
 * @example
 * const actor = await operatorIdentity({ env: process.env });
 */
export async function operatorIdentity(source: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly callerIdentity?: CallerIdentity;
}): Promise<string> {
  const { env } = source;
  if (env.AWS_ENDPOINT_URL !== undefined && env.AWS_ENDPOINT_URL !== '') return `local:${osUser(env)}`;
  if (source.callerIdentity !== undefined) return source.callerIdentity();
  return `unverified:${env.AWS_PROFILE || 'default'}:${osUser(env)}`;
}

function osUser(env: Readonly<Record<string, string | undefined>>): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the shell's own idea of the user.
    return env.USER || env.USERNAME || 'unknown';
  }
}

/**
 * {@link CallerIdentity} from STS: the ARN of whoever the credentials belong to (GetCallerIdentity needs no
 * permission). The `outbox` bin uses it on AWS; tests give their own.
 */
export function stsCallerIdentity(config: AwsClientConfig): CallerIdentity {
  return async () => {
    const sts = new STSClient(config);
    try {
      const { Arn } = await sts.send(new GetCallerIdentityCommand({}));
      if (Arn === undefined) throw new Error('STS GetCallerIdentity answered without an ARN');
      return Arn;
    } finally {
      sts.destroy();
    }
  };
}
