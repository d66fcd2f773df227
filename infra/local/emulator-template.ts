/**
 * Turns the app's synthesized CloudFormation template into one the emulator can create and that leaves the
 * event sources to the local runtime's pollers. Pure: the same template in, the same template out.
 *
 * Each change below answers something measured against moto 5.2.1 (DESIGN §5):
 * - `AWS::Lambda::EventSourceMapping` is removed: a deployed stream mapping makes moto drain the stream and
 *   a deployed SQS mapping bumps receive counts until messages land in the DLQ. The pollers take their place.
 * - Lambda-backed custom resources (`Custom::*`, `AWS::CloudFormation::CustomResource`, e.g. CDK's
 *   `Custom::LogRetention`) are removed: moto invokes the provider function during CreateStack, which needs
 *   Docker, and CreateStack never returns (it hung for over 120 s).
 * - The CDK bootstrap-version `Rule` and `Parameter` are removed: moto resolves the SSM parameter
 *   `/cdk-bootstrap/.../version` while creating the stack and answers 500, since nothing bootstrapped it.
 * - Every function's `Code` becomes an inline placeholder `ZipFile`: the template points at the CDK asset
 *   bucket, which a fresh emulator does not have, and moto fetches the object during CreateFunction
 *   (CreateStack fails with NoSuchBucket). Uploading the staged assets would need `cdk.out`, bootstrap
 *   resources and an S3 client for code the emulator never runs (moto cannot execute Lambda without
 *   Docker; the handlers run in-process), so a placeholder that says where the code really runs is enough.
 *
 * Resources moto does not model (API Gateway Stage, CloudWatch alarms, Scheduler schedules, Lambda aliases)
 * are skipped by moto itself and need no change here.
 */

/** One resource of a CloudFormation template. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly DependsOn?: string | readonly string[];
  readonly [key: string]: unknown;
}

/** A CloudFormation template, as far as the local runtime reads it. */
export interface CloudFormationTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
  readonly Parameters?: Readonly<Record<string, unknown>>;
  readonly Rules?: Readonly<Record<string, unknown>>;
  readonly Outputs?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** The template cannot be made deployable on the emulator (a kept resource needs a removed one). */
export class TemplateTransformError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Checks that `value` looks like a CloudFormation template (an object with a `Resources` object). */
export function asTemplate(value: unknown): CloudFormationTemplate {
  const resources =
    typeof value === 'object' && value !== null ? (value as { Resources?: unknown }).Resources : undefined;
  if (typeof resources !== 'object' || resources === null || Array.isArray(resources)) {
    throw new TemplateTransformError('not a CloudFormation template: it has no Resources object');
  }
  return value as CloudFormationTemplate;
}

/** Source of the placeholder every function gets on the emulator; invoking it there says why it fails. */
export const PLACEHOLDER_FUNCTION_CODE =
  "exports.handler = async () => { throw new Error('this function runs in-process in the local runtime (infra/local), not in the emulator'); };";

/** What CDK names the bootstrap-version check in every stack it synthesizes. */
const CDK_BOOTSTRAP_VERSION = { rule: 'CheckBootstrapVersion', parameter: 'BootstrapVersion' } as const;

/** Resource types the emulator must not get (see the module comment for why each one). */
export function isRemovedOnEmulator(type: string): boolean {
  return (
    type === 'AWS::Lambda::EventSourceMapping' ||
    type === 'AWS::CloudFormation::CustomResource' ||
    type.startsWith('Custom::')
  );
}

/**
 * The template to deploy on the emulator: no event source mappings or custom resources, no bootstrap-version
 * check, placeholder function code. Throws {@link TemplateTransformError} when a kept resource or output
 * refers to a removed resource.
 * @example
 * const deployable = templateForEmulator(synthExampleTemplate());
 */
export function templateForEmulator(template: CloudFormationTemplate): CloudFormationTemplate {
  const removed = new Set(
    Object.entries(template.Resources)
      .filter(([, resource]) => isRemovedOnEmulator(resource.Type))
      .map(([logicalId]) => logicalId),
  );
  const resources: Record<string, TemplateResource> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (removed.has(logicalId)) continue;
    const kept = withoutDependencies(resource, removed);
    resources[logicalId] = kept.Type === 'AWS::Lambda::Function' ? withPlaceholderCode(kept) : kept;
  }
  const result: Record<string, unknown> = { ...template, Resources: resources };
  const rules = withoutKey(template.Rules, CDK_BOOTSTRAP_VERSION.rule);
  const parameters = withoutKey(template.Parameters, CDK_BOOTSTRAP_VERSION.parameter);
  setOrDelete(result, 'Rules', rules);
  setOrDelete(result, 'Parameters', parameters);
  assertNoReferences(result, removed);
  return result as unknown as CloudFormationTemplate;
}

function withPlaceholderCode(resource: TemplateResource): TemplateResource {
  const properties = resource.Properties ?? {};
  // CloudFormation's inline code is written to index.js, so the handler must be `index.<export>`.
  return {
    ...resource,
    Properties: { ...properties, Code: { ZipFile: PLACEHOLDER_FUNCTION_CODE }, Handler: 'index.handler' },
  };
}

function withoutDependencies(resource: TemplateResource, removed: ReadonlySet<string>): TemplateResource {
  if (resource.DependsOn === undefined) return resource;
  const dependsOn = (
    typeof resource.DependsOn === 'string' ? [resource.DependsOn] : resource.DependsOn
  ).filter((id) => !removed.has(id));
  const { DependsOn: _dropped, ...rest } = resource;
  return dependsOn.length === 0 ? (rest as TemplateResource) : { ...rest, DependsOn: dependsOn };
}

function withoutKey(
  section: Readonly<Record<string, unknown>> | undefined,
  key: string,
): Record<string, unknown> | undefined {
  if (section === undefined) return undefined;
  const { [key]: _dropped, ...rest } = section;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

function setOrDelete(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/** Throws when anything left in the template still points at a removed resource. */
function assertNoReferences(template: Record<string, unknown>, removed: ReadonlySet<string>): void {
  if (removed.size === 0) return;
  for (const [section, value] of Object.entries(template)) {
    const entries = typeof value === 'object' && value !== null ? Object.entries(value) : [];
    for (const [name, body] of entries) {
      const target = findReference(body, removed);
      if (target !== undefined) {
        throw new TemplateTransformError(
          `${section}.${name} refers to ${target}, which cannot be created on the emulator; ` +
            'the local runtime would need to emulate it',
        );
      }
    }
  }
}

function findReference(node: unknown, removed: ReadonlySet<string>): string | undefined {
  if (Array.isArray(node)) {
    for (const child of node) {
      const found = findReference(child, removed);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  for (const [key, value] of Object.entries(node)) {
    const target = referencedIds(key, value).find((id) => removed.has(id));
    if (target !== undefined) return target;
    const found = findReference(value, removed);
    if (found !== undefined) return found;
  }
  return undefined;
}

function referencedIds(key: string, value: unknown): string[] {
  if (key === 'Ref' && typeof value === 'string') return [value];
  if (key === 'Fn::GetAtt') {
    if (Array.isArray(value) && typeof value[0] === 'string') return [value[0]];
    if (typeof value === 'string') return [value.split('.')[0] ?? value];
  }
  if (key === 'Fn::Sub') {
    const text = Array.isArray(value) ? value[0] : value;
    // `${Name}` and `${Name.Attr}` refer to resources; `${!Literal}` is an escape.
    if (typeof text === 'string')
      return [...text.matchAll(/\$\{([^!}.][^}.]*)/g)].map((match) => match[1] ?? '');
  }
  return [];
}
