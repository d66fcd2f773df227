import type { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyedOutboxStack } from '../../integration/fixtures/keyed-outbox/keyed-outbox-stack.ts';
import {
  dedupe,
  describePermission,
  keyPermissions,
  type Permission,
  type PermissionTarget,
  permissionsForEventSource,
} from '../../support/sdk-calls-iam.ts';
import {
  type CfnTemplate,
  constructName,
  idsOfType,
  onlyId,
  propertiesOf,
  references,
  SYNTH_TIMEOUT_MS,
  templateOf,
  testApp,
} from '../template-queries.ts';
import { eventSourcesOf, grantedPermissions } from './granted-permissions.ts';

/**
 * A service whose outbox is under a customer-managed key: each function's key grants must be exactly what the
 * mapping derives from what the function may do with data under that key — its data grants (proven equal to
 * its recorded calls on the example stack) and its event sources. A missing key action fails the first call.
 */

let json: CfnTemplate;
let key: string;

beforeAll(() => {
  const app: App = testApp();
  json = templateOf(keyedOutboxStack(app));
  // The service's key; the alarm topic has a key of its own, which no function uses.
  key = onlyId(
    idsOfType(json, 'AWS::KMS::Key').filter((id) => constructName(json, id) === 'MessagesKey'),
    'customer-managed key',
  );
}, SYNTH_TIMEOUT_MS);

/** The key of a target, when the resource holding its data is encrypted with the customer-managed key. */
function keyOf(target: PermissionTarget): string | undefined {
  if (target.kind === 'any' || target.kind === 'key' || target.kind === 'logGroup') return undefined;
  return references(propertiesOf(json, target.name), key) ? key : undefined;
}

function keyNeeds(id: string): string[] {
  const data: Permission[] = [
    ...grantedPermissions(json, id).filter((grant) => grant.target.kind !== 'key'),
    ...eventSourcesOf(json, id).flatMap(permissionsForEventSource),
  ];
  return keyPermissions(data, keyOf).map(describePermission);
}

function keyGrants(id: string): string[] {
  return dedupe(grantedPermissions(json, id).filter((grant) => grant.target.kind === 'key')).map(
    describePermission,
  );
}

/** Whether a granted `action on target` (its action possibly ending in `*`) allows a needed one. */
function covers(grant: string, need: string): boolean {
  const [grantAction, grantTarget] = grant.split(' on ');
  const [needAction, needTarget] = need.split(' on ');
  if (grantTarget !== needTarget || grantAction === undefined || needAction === undefined) return false;
  return grantAction.endsWith('*')
    ? needAction.startsWith(grantAction.slice(0, -1))
    : grantAction === needAction;
}

/** `list(id)` for every function, by construct name. */
function perFunction(list: (id: string) => string[]): Record<string, string[]> {
  return Object.fromEntries(
    idsOfType(json, 'AWS::Lambda::Function').map((id) => [constructName(json, id) ?? id, list(id)]),
  );
}

describe('key grants with a customer-managed key', () => {
  it('are derived for every function of the service', () => {
    const names = idsOfType(json, 'AWS::Lambda::Function').map((id) => constructName(json, id));
    expect(names.length).toBeGreaterThan(0);
  });

  it('give every function each key action its data and event sources need (a missing one is an outage)', () => {
    const missing = perFunction((id) => {
      const granted = keyGrants(id);
      return keyNeeds(id).filter((need) => !granted.some((grant) => covers(grant, need)));
    });
    expect(missing).toEqual(perFunction(() => []));
  });

  it('give no function a key action beyond those', () => {
    const extra = perFunction((id) => {
      const needed = keyNeeds(id);
      return keyGrants(id).filter((grant) => !needed.some((need) => covers(grant, need)));
    });
    expect(extra).toEqual(perFunction(() => []));
  });
});
