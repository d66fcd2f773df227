import { JsonSchemaVersion } from 'aws-cdk-lib/aws-apigateway';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { requestModelSchema } from '../../../infra/stacks/request-model-schema.ts';

describe('requestModelSchema', () => {
  it('renders a zod schema as a draft-4 API Gateway model', () => {
    const schema = requestModelSchema(z.object({ quantity: z.number().int().min(1).max(1000) }).strict());
    expect(schema).toEqual({
      schema: JsonSchemaVersion.DRAFT4,
      type: 'object',
      properties: { quantity: { type: 'integer', minimum: 1, maximum: 1000 } },
      required: ['quantity'],
      additionalProperties: false,
    });
  });

  it('keeps property names that look like keywords', () => {
    const schema = requestModelSchema(z.object({ $ref: z.string() }));
    expect(schema.properties).toEqual({ $ref: { type: 'string' } });
  });
});
