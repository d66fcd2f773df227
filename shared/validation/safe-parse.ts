/**
 * Parsing with zod's English issue messages. The library's schemas are `zod/mini` schemas, which keep Lambda
 * bundles small (classic `zod` cannot be tree-shaken and is most of a bundle); mini loads no locale, so without
 * this a problem would read "Invalid input" instead of naming what is wrong.
 */
import {
  type $ZodType,
  type output,
  type util,
  parse as zodParse,
  safeParse as zodSafeParse,
} from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';

/** English messages for issues whose schema gives none, for this parse only: the global zod config is left alone. */
const ENGLISH = { error: en().localeError } as const;

/** `schema.safeParse(value)` with English issue messages. */
export function safeParse<T extends $ZodType>(schema: T, value: unknown): util.SafeParseResult<output<T>> {
  return zodSafeParse(schema, value, ENGLISH);
}

/** `schema.parse(value)` with English issue messages: the value, or a zod error saying what is wrong. */
export function parse<T extends $ZodType>(schema: T, value: unknown): output<T> {
  return zodParse(schema, value, ENGLISH);
}
