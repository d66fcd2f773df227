/** The names the local runtime gives a template's resources: their CDK construct path, as `cdk` shows it. */
import type { TemplateResource } from './cloudformation-template.ts';

/** CloudFormation resource metadata key under which the CDK records a resource's construct path. */
export const CDK_PATH_METADATA = 'aws:cdk:path';

/**
 * A resource's local name: its `aws:cdk:path` without the leading stack segment and the trailing `/Resource`
 * (`OutboxExample/Outbox/Relay/Resource` → `Outbox/Relay`), or its logical id when the template has no path
 * metadata (an app synthesized with path metadata turned off).
 */
export function localName(logicalId: string, resource: TemplateResource): string {
  const path = resource.Metadata?.[CDK_PATH_METADATA];
  if (typeof path !== 'string') return logicalId;
  const segments = path.split('/').slice(1);
  if (segments[segments.length - 1] === 'Resource') segments.pop();
  return segments.length === 0 ? logicalId : segments.join('/');
}

/** The stack's construct id, the first segment of any resource's `aws:cdk:path`; `undefined` without paths. */
export function stackNameFromPaths(
  resources: Readonly<Record<string, TemplateResource>>,
): string | undefined {
  for (const resource of Object.values(resources)) {
    const path = resource.Metadata?.[CDK_PATH_METADATA];
    if (typeof path === 'string' && path.includes('/')) return path.split('/')[0];
  }
  return undefined;
}
