import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { toJSONSchema } from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';

/** JSON Schema keywords CDK spells without their `$` (it adds the `$` back when it renders the model). */
const PREFIXED_KEYWORDS: Readonly<Record<string, string>> = { $schema: 'schema', $ref: 'ref' };

/** Keywords whose children are user-chosen names (property names), never keywords. */
const NAMED_CHILDREN = new Set(['definitions', 'properties', 'patternProperties', 'dependencies']);

/**
 * The API Gateway request model for a zod schema, so the gateway rejects a bad body with the same rules the
 * handler applies. API Gateway validates with JSON Schema draft 4.
 * @example
 * api.addModel('OrderRequest', { contentType: 'application/json', schema: requestModelSchema(orderRequestSchema) });
 */
export function requestModelSchema(schema: $ZodType): apigateway.JsonSchema {
  const draft4: unknown = toJSONSchema(schema, { target: 'draft-4' });
  // The shape is JSON Schema draft 4 with CDK's key spelling, which is what apigateway.JsonSchema describes.
  return toCdkKeys(draft4, false) as apigateway.JsonSchema;
}

/** `value` with `$schema`/`$ref` renamed to CDK's `schema`/`ref` wherever a key is a keyword. */
function toCdkKeys(value: unknown, keysAreNames: boolean): unknown {
  if (Array.isArray(value)) return value.map((entry) => toCdkKeys(entry, false));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      keysAreNames ? key : (PREFIXED_KEYWORDS[key] ?? key),
      toCdkKeys(child, !keysAreNames && NAMED_CHILDREN.has(key)),
    ]),
  );
}
