/** Reads the Lambda functions the local runtime runs: handler entry, export, timeout, memory, environment. */
import type { LOCAL_ENTRY_METADATA as ConstructEntryMetadata } from '../../../constructs/index.ts';
import {
  type CloudFormationTemplate,
  isRecord,
  ResourceType,
  resourcesOfType,
} from './cloudformation-template.ts';
import { localName } from './resource-names.ts';
import type { SkippedResource } from './skipped-resource.ts';

/**
 * The metadata key the construct writes a function's handler module under. Typed as the construct's constant,
 * so tsc holds the two equal without loading the CDK side (aws-cdk-lib) into the runtime's process to read it.
 */
const LOCAL_ENTRY_METADATA: typeof ConstructEntryMetadata = 'serverless-outbox:entry';

/** A function of the template, as the local runtime runs it. */
export interface FunctionDefinition {
  /** Local name (the construct path: `Outbox/Relay`); overrides and `invoke` use it. */
  readonly name: string;
  readonly logicalId: string;
  /** Handler module, relative to the project root (the `serverless-outbox:entry` metadata). */
  readonly entry: string;
  /** The module's export that is the handler: `index.handler` → `handler`. */
  readonly handlerExport: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** `Environment.Variables` as written in the template, intrinsics unresolved. */
  readonly environment: Readonly<Record<string, unknown>>;
  /** The template's `Runtime` (`nodejs24.x`), when it names one: the Node.js major the function runs on. */
  readonly runtime?: string;
}

/** Lambda's defaults when the template leaves a property out. */
const LAMBDA_DEFAULTS = { timeoutSeconds: 3, memoryMb: 128 } as const;

/**
 * Every function that carries a handler entry; the others are returned as skipped (the local runtime can only
 * run code it can import).
 */
export function readFunctions(template: CloudFormationTemplate): {
  readonly functions: FunctionDefinition[];
  readonly skipped: SkippedResource[];
} {
  const functions: FunctionDefinition[] = [];
  const skipped: SkippedResource[] = [];
  for (const [logicalId, resource] of resourcesOfType(template, ResourceType.FUNCTION)) {
    const name = localName(logicalId, resource);
    const entry = resource.Metadata?.[LOCAL_ENTRY_METADATA];
    if (typeof entry !== 'string' || entry === '') {
      skipped.push({
        name,
        type: resource.Type,
        reason: `no ${LOCAL_ENTRY_METADATA} metadata naming its handler module, so it cannot run in-process`,
      });
      continue;
    }
    const properties = resource.Properties ?? {};
    const variables = isRecord(properties.Environment) ? properties.Environment.Variables : undefined;
    functions.push({
      name,
      logicalId,
      entry,
      handlerExport: handlerExport(properties.Handler),
      timeoutSeconds: numberOr(properties.Timeout, LAMBDA_DEFAULTS.timeoutSeconds),
      memoryMb: numberOr(properties.MemorySize, LAMBDA_DEFAULTS.memoryMb),
      environment: isRecord(variables) ? variables : {},
      ...(typeof properties.Runtime === 'string' ? { runtime: properties.Runtime } : {}),
    });
  }
  return { functions, skipped };
}

/** `index.handler` → `handler`; `src/app.lambda.main` → `main` (the part after the last dot). */
export function handlerExport(handler: unknown): string {
  if (typeof handler !== 'string' || handler === '') return 'handler';
  return handler.slice(handler.lastIndexOf('.') + 1);
}

function numberOr(value: unknown, fallback: number): number {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : fallback;
}
