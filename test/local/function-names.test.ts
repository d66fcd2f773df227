import { describe, expect, it } from 'vitest';
import { functionNames } from '../../infra/dev/local/host/function-names.ts';

const SEVERAL = functionNames(
  ['Shop/Health', 'Shop/Outbox/Relay', 'Mailroom/Health', 'Mailroom/Courier', 'Prod/Billing/Invoicer'],
  ['Shop', 'Mailroom', 'Prod/Billing'],
);

describe('functionNames of an app of several stacks', () => {
  it('takes a qualified name as it is, and a construct path that only one stack has', () => {
    expect(SEVERAL.resolve('Shop/Health')).toBe('Shop/Health');
    expect(SEVERAL.resolve('Courier')).toBe('Mailroom/Courier');
    expect(SEVERAL.resolve('Outbox/Relay')).toBe('Shop/Outbox/Relay');
    // A stage's stack: its display name holds a slash too.
    expect(SEVERAL.resolve('Invoicer')).toBe('Prod/Billing/Invoicer');
  });

  it('refuses a construct path two stacks have, naming both, and a name no function has, naming them all', () => {
    expect(() => SEVERAL.resolve('Health')).toThrow(
      expect.objectContaining({
        code: 'AMBIGUOUS_FUNCTION',
        message:
          'Health names a function in 2 stacks (Shop/Health, Mailroom/Health); say which one with its stack: <stack>/<path>',
      }),
    );
    expect(() => SEVERAL.resolve('Relay')).toThrow(
      expect.objectContaining({
        code: 'UNKNOWN_FUNCTION',
        message:
          'no function Relay runs locally (functions: Shop/Health, Shop/Outbox/Relay, Mailroom/Health, Mailroom/Courier, Prod/Billing/Invoicer)',
      }),
    );
  });

  it('lets a record keyed by function name answer the unambiguous construct paths, without listing them', () => {
    const record = SEVERAL.withPaths({
      'Shop/Health': 1,
      'Shop/Outbox/Relay': 2,
      'Mailroom/Health': 3,
      'Mailroom/Courier': 4,
      'Prod/Billing/Invoicer': 5,
    });
    expect([record.Courier, record['Outbox/Relay'], record.Invoicer, record.Health]).toEqual([
      4,
      2,
      5,
      undefined,
    ]);
    expect(Object.keys(record)).toEqual([
      'Shop/Health',
      'Shop/Outbox/Relay',
      'Mailroom/Health',
      'Mailroom/Courier',
      'Prod/Billing/Invoicer',
    ]);
    expect({ ...record }).not.toHaveProperty('Courier');
  });
});

describe('functionNames of an app of one stack', () => {
  it('knows each function by its construct path alone, as it always did', () => {
    const one = functionNames(['Writer', 'Audit/Auditor'], []);
    expect(one.resolve('Audit/Auditor')).toBe('Audit/Auditor');
    expect(() => one.resolve('Auditor')).toThrow(
      /no function Auditor runs locally \(functions: Writer, Audit\/Auditor\)/,
    );
    const record = { Writer: 1, 'Audit/Auditor': 2 };
    expect(one.withPaths(record)).toEqual(record);
  });
});
