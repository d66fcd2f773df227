/**
 * IAM's evaluation of one role's identity policy, for what the tests need of it: statements whose resources
 * are resolved to ARNs, an action and a resource matched with IAM's wildcards, an explicit Deny winning over
 * any Allow, and the condition keys the outbox's grants use (`dynamodb:Attributes`, `dynamodb:ReturnValues`).
 * A condition on any other key throws: a test must not pass a statement it cannot evaluate. Pure.
 */

/** What one SDK call asks IAM for: one action on one resource, with the values its condition keys would read. */
export interface AccessRequest {
  readonly action: string;
  /** The resource's ARN, or `*` for an action without resource-level permission (ListStreams). */
  readonly resource: string;
  /** `dynamodb:Attributes`: the attributes an UpdateItem's expression names (keys left out). */
  readonly attributes?: readonly string[];
  /** `dynamodb:ReturnValues`: what an UpdateItem asks back (`NONE` when it asks nothing). */
  readonly returnValues?: string;
}

/** A policy statement with its resources resolved (ARN patterns, `*` allowed). */
export interface ResolvedStatement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  readonly resources: readonly string[];
  readonly condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** Whether IAM's wildcard pattern (`*` any run of characters, `?` one character) matches `value`, case-sensitively. */
export function matchesPattern(pattern: string, value: string): boolean {
  const source = [...pattern]
    .map((character) => {
      if (character === '*') return '.*';
      if (character === '?') return '.';
      return character.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`, 's').test(value);
}

/** Whether an action pattern (`dynamodb:Get*`) names `action`; IAM compares actions case-insensitively. */
function matchesAction(pattern: string, action: string): boolean {
  return matchesPattern(pattern.toLowerCase(), action.toLowerCase());
}

/** Whether `statements` allow `request`: some Allow statement matches it and no Deny statement does. */
export function isAllowed(request: AccessRequest, statements: readonly ResolvedStatement[]): boolean {
  const matching = statements.filter(
    (statement) =>
      statement.actions.some((pattern) => matchesAction(pattern, request.action)) &&
      statement.resources.some((pattern) => matchesPattern(pattern, request.resource)) &&
      conditionHolds(statement.condition, request),
  );
  if (matching.some((statement) => statement.effect === 'Deny')) return false;
  return matching.some((statement) => statement.effect === 'Allow');
}

/** What a request gives each condition key: its values, or `undefined` when the request does not set it. */
function valuesOf(key: string, request: AccessRequest): readonly string[] | undefined {
  switch (key) {
    case 'dynamodb:Attributes':
      return request.attributes;
    case 'dynamodb:ReturnValues':
      return request.returnValues === undefined ? undefined : [request.returnValues];
    default:
      throw new Error(`no evaluation of the condition key ${key}`);
  }
}

function conditionHolds(condition: ResolvedStatement['condition'], request: AccessRequest): boolean {
  if (condition === undefined) return true;
  return Object.entries(condition).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => {
      const allowed = (Array.isArray(expected) ? expected : [expected]).map(String);
      const given = valuesOf(key, request);
      switch (operator) {
        // Every value the request gives is listed (true when it gives none).
        case 'ForAllValues:StringEquals':
          return (given ?? []).every((value) => allowed.includes(value));
        case 'StringEqualsIfExists':
          return given === undefined || given.every((value) => allowed.includes(value));
        case 'StringEquals':
          return given !== undefined && given.length > 0 && given.every((value) => allowed.includes(value));
        default:
          throw new Error(`no evaluation of the condition operator ${operator}`);
      }
    }),
  );
}
