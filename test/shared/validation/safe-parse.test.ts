import { describe, expect, it } from 'vitest';
// zod/mini only: classic zod would install its English locale globally and hide a missing one.
import * as z from 'zod/mini';
import { parse, safeParse } from '../../../shared/validation/safe-parse.ts';

const quantity = z.number().check(z.int(), z.minimum(1));

describe('safeParse', () => {
  it('names the problem in English, which zod/mini alone does not', () => {
    const bare = z.safeParse(quantity, 0);
    expect(bare.error?.issues[0]?.message).toBe('Invalid input');
    const parsed = safeParse(quantity, 0);
    expect(parsed.error?.issues[0]?.message).toBe('Too small: expected number to be >=1');
  });

  it('keeps a message the schema gives itself', () => {
    const named = z.string().check(z.regex(/^[a-z]+$/, 'must be lowercase letters'));
    expect(safeParse(named, 'ABC').error?.issues[0]?.message).toBe('must be lowercase letters');
  });

  it('returns the value when it is valid', () => {
    expect(safeParse(quantity, 3)).toEqual({ success: true, data: 3 });
  });
});

describe('parse', () => {
  it('throws a zod error whose issues are in English', () => {
    expect(() => parse(z.strictObject({ id: z.string() }), { id: 1 })).toThrow(
      'Invalid input: expected string, received number',
    );
  });
});
