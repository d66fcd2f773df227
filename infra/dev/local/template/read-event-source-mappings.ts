/** Reads the template's event source mappings with every setting the local pollers honour. */
import { LocalRuntimeError } from '../local-runtime-error.ts';
import {
  type CloudFormationTemplate,
  isRecord,
  ResourceType,
  referencedLogicalId,
  resourcesOfType,
  type TemplateResource,
} from './cloudformation-template.ts';
import { targetFunction } from './function-target.ts';
import { localName } from './resource-names.ts';
import type { SkippedResource } from './skipped-resource.ts';

/** What a mapping reads: a DynamoDB stream or an SQS queue; `arn` is the template value, unresolved. */
export interface EventSourceReference {
  readonly kind: 'stream' | 'queue';
  readonly arn: unknown;
}

/** An AWS::Lambda::EventSourceMapping, with AWS's defaults filled in. */
export interface EventSourceMappingDefinition {
  /** Local name of the mapping (its construct path). */
  readonly name: string;
  readonly logicalId: string;
  /** Local name of the function it invokes. */
  readonly functionName: string;
  readonly source: EventSourceReference;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Filter patterns (parsed `FilterCriteria.Filters[].Pattern`); a record passes when any matches. */
  readonly filterPatterns: readonly Readonly<Record<string, unknown>>[];
  readonly bisectBatchOnError: boolean;
  /** Retries of a failing stream batch; -1 retries until the records expire. */
  readonly maxRetryAttempts: number;
  /** -1: records never expire for the mapping. */
  readonly maxRecordAgeSeconds: number;
  readonly parallelizationFactor: number;
  /** `DestinationConfig.OnFailure.Destination`, unresolved. */
  readonly onFailureDestination: unknown;
  /** `FunctionResponseTypes` holds `ReportBatchItemFailures`: the function's partial batch response counts. */
  readonly reportBatchItemFailures: boolean;
  readonly startingPosition: string | undefined;
}

/** Lambda's defaults for settings a mapping leaves out. */
const MAPPING_DEFAULTS = {
  batchSize: { stream: 100, queue: 10 },
  maxBatchingWindowSeconds: 0,
  maxRetryAttempts: -1,
  maxRecordAgeSeconds: -1,
  parallelizationFactor: 1,
} as const;

/**
 * Every enabled mapping whose function the runtime runs (`functionIds`: logical id → local name); disabled
 * mappings, mappings of other functions, and sources other than DynamoDB streams and SQS queues are returned
 * as skipped.
 */
export function readEventSourceMappings(
  template: CloudFormationTemplate,
  functionIds: ReadonlyMap<string, string>,
): { readonly mappings: EventSourceMappingDefinition[]; readonly skipped: SkippedResource[] } {
  const mappings: EventSourceMappingDefinition[] = [];
  const skipped: SkippedResource[] = [];
  for (const [logicalId, resource] of resourcesOfType(template, ResourceType.EVENT_SOURCE_MAPPING)) {
    const name = localName(logicalId, resource);
    const properties = resource.Properties ?? {};
    const functionName = targetFunction(properties.FunctionName, template, functionIds);
    const source = sourceOf(properties.EventSourceArn, template);
    if (properties.Enabled === false || properties.Enabled === 'false') {
      skipped.push({ name, type: resource.Type, reason: 'the mapping is disabled (Enabled: false)' });
      continue;
    }
    if (functionName === undefined || source === undefined) {
      skipped.push({
        name,
        type: resource.Type,
        reason:
          functionName === undefined
            ? `its function (${JSON.stringify(properties.FunctionName)}) is not one the runtime runs`
            : `its source ${JSON.stringify(properties.EventSourceArn)} is neither a DynamoDB stream nor an SQS queue`,
      });
      continue;
    }
    mappings.push(mapping({ name, logicalId, functionName, source, resource }));
  }
  return { mappings, skipped };
}

function mapping(parts: {
  readonly name: string;
  readonly logicalId: string;
  readonly functionName: string;
  readonly source: EventSourceReference;
  readonly resource: TemplateResource;
}): EventSourceMappingDefinition {
  const properties = parts.resource.Properties ?? {};
  const where = `event source mapping ${parts.name}`;
  const destination = isRecord(properties.DestinationConfig)
    ? properties.DestinationConfig.OnFailure
    : undefined;
  const responseTypes = Array.isArray(properties.FunctionResponseTypes)
    ? properties.FunctionResponseTypes
    : [];
  return {
    name: parts.name,
    logicalId: parts.logicalId,
    functionName: parts.functionName,
    source: parts.source,
    batchSize: integer(properties.BatchSize, MAPPING_DEFAULTS.batchSize[parts.source.kind], where),
    maxBatchingWindowSeconds: integer(
      properties.MaximumBatchingWindowInSeconds,
      MAPPING_DEFAULTS.maxBatchingWindowSeconds,
      where,
    ),
    filterPatterns: filterPatterns(properties.FilterCriteria, where),
    bisectBatchOnError: properties.BisectBatchOnFunctionError === true,
    maxRetryAttempts: integer(properties.MaximumRetryAttempts, MAPPING_DEFAULTS.maxRetryAttempts, where),
    maxRecordAgeSeconds: integer(
      properties.MaximumRecordAgeInSeconds,
      MAPPING_DEFAULTS.maxRecordAgeSeconds,
      where,
    ),
    parallelizationFactor: integer(
      properties.ParallelizationFactor,
      MAPPING_DEFAULTS.parallelizationFactor,
      where,
    ),
    onFailureDestination: isRecord(destination) ? destination.Destination : undefined,
    reportBatchItemFailures: responseTypes.includes('ReportBatchItemFailures'),
    startingPosition:
      typeof properties.StartingPosition === 'string' ? properties.StartingPosition : undefined,
  };
}

/**
 * A stream when the ARN is a table's `StreamArn` (or a literal stream ARN), a queue when it is a queue's `Arn`
 * (or a literal SQS ARN); `undefined` for anything else (Kinesis, Kafka, MQ…).
 */
function sourceOf(arn: unknown, template: CloudFormationTemplate): EventSourceReference | undefined {
  if (typeof arn === 'string') {
    if (/^arn:[^:]+:dynamodb:.*\/stream\//.test(arn)) return { kind: 'stream', arn };
    if (/^arn:[^:]+:sqs:/.test(arn)) return { kind: 'queue', arn };
    return undefined;
  }
  const table = referencedLogicalId(arn, 'StreamArn');
  if (table !== undefined && template.Resources[table]?.Type === ResourceType.TABLE)
    return { kind: 'stream', arn };
  const queue = referencedLogicalId(arn, 'Arn');
  if (queue !== undefined && template.Resources[queue]?.Type === ResourceType.QUEUE)
    return { kind: 'queue', arn };
  return undefined;
}

function filterPatterns(criteria: unknown, where: string): Readonly<Record<string, unknown>>[] {
  const filters = isRecord(criteria) && Array.isArray(criteria.Filters) ? criteria.Filters : [];
  return filters.map((filter, index) => {
    const pattern = isRecord(filter) ? filter.Pattern : undefined;
    try {
      const parsed: unknown = typeof pattern === 'string' ? JSON.parse(pattern) : pattern;
      if (isRecord(parsed)) return parsed;
    } catch (cause) {
      throw new LocalRuntimeError('UNSUPPORTED_TEMPLATE', `${where}: filter ${index} is not JSON`, { cause });
    }
    throw new LocalRuntimeError('UNSUPPORTED_TEMPLATE', `${where}: filter ${index} has no pattern object`);
  });
}

function integer(value: unknown, fallback: number, where: string): number {
  if (value === undefined) return fallback;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) {
    throw new LocalRuntimeError(
      'UNSUPPORTED_TEMPLATE',
      `${where}: ${JSON.stringify(value)} is not an integer`,
    );
  }
  return number;
}
