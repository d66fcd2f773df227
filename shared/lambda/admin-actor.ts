import { userInfo } from 'node:os';

/** The part of API Gateway's request identity the admin API names its operator from. */
export interface CallerIdentity {
  /** The IAM principal's ARN; API Gateway sets it on every AWS_IAM-authorised request. */
  readonly userArn?: string | null;
  /** The principal id of the caller (an IAM user's or a role session's id). */
  readonly caller?: string | null;
  /** The principal id; the local runtime puts the local user's name here. */
  readonly user?: string | null;
}

/** How unsigned requests are answered. */
export interface ActorPolicy {
  /**
   * Whether a request without an IAM identity is served, as `local:<user>`: only where IAM is not enforced
   * (the local runtime, an emulator). On AWS such a request never reached the admin API through an AWS_IAM
   * method, so it is refused.
   */
  readonly allowUnsigned: boolean;
  /** The user a local request is made by when the event names none. @default the operating-system user */
  readonly localUser?: () => string;
}

/**
 * Who an admin request acts as, for the audit trail and the message's history: the IAM caller's ARN, else its
 * principal id, else — only where IAM is not enforced — `local:<user>`; `undefined` for an unsigned request
 * that must be refused.
 * @example
 * adminActor({ userArn: 'arn:aws:iam::123456789012:user/ana' }, { allowUnsigned: false }); // the ARN
 * adminActor({ user: 'ana' }, { allowUnsigned: true }); // 'local:ana'
 */
export function adminActor(identity: CallerIdentity | undefined, policy: ActorPolicy): string | undefined {
  const present = (value: string | null | undefined): string | undefined =>
    typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  const signed = present(identity?.userArn) ?? present(identity?.caller);
  if (signed !== undefined) return signed;
  if (!policy.allowUnsigned) return undefined;
  return `local:${present(identity?.user) ?? (policy.localUser ?? operatingSystemUser)()}`;
}

/** The user this process runs as; `unknown` where the system has no name for it (a container without one). */
export function operatingSystemUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}
