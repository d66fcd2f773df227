/**
 * What changed between two templates of one CDK app, as far as a running local runtime is concerned: resources
 * added, removed or changed, and outputs. Asset details (a function's `Code`, `aws:asset:*` metadata) are left
 * out: they change with every edit of a handler, which hot reload already serves.
 */
import { isDeepStrictEqual } from 'node:util';
import { type CloudFormationTemplate, isRecord } from './cloudformation-template.ts';
import { localName } from './resource-names.ts';

/** Changes by kind, each a list of resource names (construct paths where the template has them). */
export interface TemplateChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
  readonly outputsChanged: boolean;
}

/**
 * The changes from `before` to `after`; `undefined` when nothing a runtime runs differs.
 * @example
 * const changes = templateChanges(deployed, resynthesized); // { added: ['Shop/Refunds'], … }
 */
export function templateChanges(
  before: CloudFormationTemplate,
  after: CloudFormationTemplate,
): TemplateChanges | undefined {
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const [logicalId, resource] of Object.entries(after.Resources)) {
    const previous = before.Resources[logicalId];
    if (previous === undefined) added.push(localName(logicalId, resource));
    else if (!isDeepStrictEqual(comparable(previous), comparable(resource)))
      changed.push(localName(logicalId, resource));
  }
  for (const [logicalId, resource] of Object.entries(before.Resources)) {
    if (after.Resources[logicalId] === undefined) removed.push(localName(logicalId, resource));
  }
  const outputsChanged = !isDeepStrictEqual(before.Outputs ?? {}, after.Outputs ?? {});
  if (added.length + removed.length + changed.length === 0 && !outputsChanged) return undefined;
  return { added, removed, changed, outputsChanged };
}

/** One line for the console. */
export function describeTemplateChanges(changes: TemplateChanges): string {
  const parts = [
    changes.added.length === 0 ? '' : `added ${changes.added.join(', ')}`,
    changes.removed.length === 0 ? '' : `removed ${changes.removed.join(', ')}`,
    changes.changed.length === 0 ? '' : `changed ${changes.changed.join(', ')}`,
    changes.outputsChanged ? 'outputs changed' : '',
  ].filter((part) => part !== '');
  return parts.join('; ');
}

function comparable(resource: unknown): unknown {
  if (!isRecord(resource)) return resource;
  const properties = isRecord(resource.Properties) ? { ...resource.Properties } : undefined;
  if (properties !== undefined) delete properties.Code;
  const metadata = isRecord(resource.Metadata)
    ? Object.fromEntries(Object.entries(resource.Metadata).filter(([key]) => !key.startsWith('aws:asset:')))
    : undefined;
  return { ...resource, Properties: properties, Metadata: metadata };
}
