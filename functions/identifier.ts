import * as z from 'zod/mini';

/** An order id or a SKU, as the HTTP contract fixes them: 1–64 characters of A-Z, a-z, 0-9, _ or -. */
export const identifierSchema = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, _ or -'));
