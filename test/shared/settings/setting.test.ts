import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, OutboxErrorCode } from '../../../shared/errors.ts';
import {
  integerSetting,
  jsonSetting,
  readOptionalSetting,
  readSetting,
  requireEnv,
  type Setting,
  textSetting,
} from '../../../shared/settings/setting.ts';

const batch = integerSetting({ name: 'BATCH', description: 'records per batch', min: 0, defaultValue: 7 });
const deadline = integerSetting({ name: 'DEADLINE_MS', description: 'a deadline', min: 1_000, max: 60_000 });
const table = textSetting(
  { name: 'ORDERS_TABLE', description: 'the orders table' },
  z.string().regex(/^[a-z-]+$/, 'must be lowercase letters and dashes'),
);
const limits = jsonSetting(
  { name: 'LIMITS', description: 'topic → limit', defaultValue: {} },
  z.record(z.string().min(1), z.number().int().positive()),
);

/** The ConfigError `read` throws, so that its message, code and cause can be inspected. */
function configErrorOf(read: () => unknown): ConfigError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('readSetting', () => {
  it('reads the variable’s text', () => {
    expect(readSetting({ BATCH: '25' }, batch)).toBe(25);
    expect(readSetting({ ORDERS_TABLE: 'orders' }, table)).toBe('orders');
    expect(readSetting({ LIMITS: '{"order.created":3}' }, limits)).toEqual({ 'order.created': 3 });
  });

  it('uses the default when the variable is absent', () => {
    expect(readSetting({}, batch)).toBe(7);
    expect(readSetting({ BATCH: undefined }, batch)).toBe(7);
    expect(readSetting({}, limits)).toEqual({});
  });

  it.each([
    ['0', 0],
    ['300000', 300_000],
  ])('reads "%s" as %d (0 is a real value, not absent)', (raw, expected) => {
    expect(readSetting({ BATCH: raw }, batch)).toBe(expected);
  });

  it('refuses a required variable that is absent with a ConfigError naming and describing it', () => {
    const error = configErrorOf(() => readSetting({}, deadline));

    expect(error.code).toBe(OutboxErrorCode.INVALID_CONFIG);
    expect(error.message).toBe('DEADLINE_MS is not set (a deadline)');
  });

  it('refuses a present but empty variable instead of using the default', () => {
    expect(configErrorOf(() => readSetting({ BATCH: '' }, batch)).message).toMatch(/^BATCH /);
  });
});

describe('readOptionalSetting', () => {
  it('is undefined when the variable is absent, even when it has a default', () => {
    expect(readOptionalSetting({}, batch)).toBeUndefined();
    expect(readOptionalSetting({}, table)).toBeUndefined();
  });

  it('reads and checks a variable that is present', () => {
    expect(readOptionalSetting({ ORDERS_TABLE: 'orders' }, table)).toBe('orders');
    expect(configErrorOf(() => readOptionalSetting({ ORDERS_TABLE: '' }, table)).message).toMatch(
      /^ORDERS_TABLE /,
    );
  });
});

describe('requireEnv', () => {
  it('returns the value of a variable that is present', () => {
    expect(requireEnv({ ORDERS_TABLE: 'orders' }, 'ORDERS_TABLE')).toBe('orders');
  });

  it.each([
    ['missing', {}],
    ['empty', { ORDERS_TABLE: '' }],
  ])('throws a ConfigError naming a %s variable', (_case, env) => {
    const error = configErrorOf(() => requireEnv(env, 'ORDERS_TABLE'));

    expect(error.code).toBe(OutboxErrorCode.INVALID_CONFIG);
    expect(error.message).toBe('ORDERS_TABLE is not set');
  });
});

describe('textSetting', () => {
  it('refuses an empty text, naming the variable', () => {
    expect(configErrorOf(() => table.parse('')).message).toBe('ORDERS_TABLE must not be empty, got ""');
  });

  it.each([' ', 'Orders', 'orders table', ' orders'])('refuses "%s" with its schema’s problem', (raw) => {
    expect(configErrorOf(() => table.parse(raw)).message).toBe(
      `ORDERS_TABLE must be lowercase letters and dashes, got ${JSON.stringify(raw)}`,
    );
  });

  it('takes any non-empty text without a schema', () => {
    const any = textSetting({ name: 'ANY', description: 'anything' });

    expect(any.parse(' x ')).toBe(' x ');
    expect(() => any.parse('')).toThrow(/ANY must not be empty/);
  });
});

describe('integerSetting', () => {
  it.each(['', ' ', '-1', '1.5', 'ten', '1e3', '0x10', '5 ', ' 5', '+5', '١٢'])(
    'refuses "%s" with a ConfigError naming the variable instead of guessing',
    (raw) => {
      const error = configErrorOf(() => readSetting({ BATCH: raw }, batch));

      expect(error.message).toBe(`BATCH must be an integer of at least 0, got ${JSON.stringify(raw)}`);
    },
  );

  it.each(['999', '60001', '99999999999999999999'])(
    'refuses %s outside [min, max], naming the range',
    (raw) => {
      expect(configErrorOf(() => deadline.parse(raw)).message).toMatch(
        /^DEADLINE_MS must be an integer from 1000 to 60000, got /,
      );
    },
  );

  it('accepts the bounds themselves', () => {
    expect(deadline.parse('1000')).toBe(1_000);
    expect(deadline.parse('60000')).toBe(60_000);
  });

  it('refuses, at definition, a default outside its own range', () => {
    expect(() => integerSetting({ name: 'SHARDS', description: 'shards', min: 1, defaultValue: 0 })).toThrow(
      /SHARDS must be an integer of at least 1, got 0/,
    );
  });

  it('writes a value as plain digits, and refuses to write one the function would refuse', () => {
    expect(deadline.format(5_000)).toBe('5000');
    expect(() => deadline.format(500)).toThrow(ConfigError);
    expect(() => deadline.format(1_500.5)).toThrow(/DEADLINE_MS/);
    expect(deadline.parse(deadline.format(42_000))).toBe(42_000);
  });

  it('validates a value given in code with the same message', () => {
    expect(deadline.validate(2_000)).toBe(2_000);
    expect(() => deadline.validate(70_000)).toThrow(
      'DEADLINE_MS must be an integer from 1000 to 60000, got 70000',
    );
  });
});

describe('jsonSetting', () => {
  it.each(['', '{', "{'order.created': 1}", 'undefined'])(
    'refuses text that is not JSON ("%s"), naming the variable and keeping the parse error as cause',
    (raw) => {
      const error = configErrorOf(() => limits.parse(raw));

      expect(error.message).toMatch(/^LIMITS /);
      expect(error.message).toContain(`got ${JSON.stringify(raw)}`);
      expect(error.cause).toBeInstanceOf(SyntaxError);
    },
  );

  it.each([
    ['an array', '[]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"order.created"'],
  ])('refuses %s where an object is expected', (_case, raw) => {
    expect(configErrorOf(() => limits.parse(raw)).message).toMatch(/^LIMITS .*expected record/);
  });

  it('lists each problem of an object with its path', () => {
    const message = configErrorOf(() => limits.parse('{"a.b":0,"c.d":"x"}')).message;

    expect(message).toMatch(/^LIMITS is invalid: /);
    expect(message).toContain('a.b');
    expect(message).toContain('c.d');
    expect(message).not.toContain('\n');
  });

  it('writes a value as JSON that reads back the same', () => {
    const value = { 'order.created': 3, 'order.shipped': 10 };

    expect(limits.format(value)).toBe('{"order.created":3,"order.shipped":10}');
    expect(limits.parse(limits.format(value))).toEqual(value);
    expect(() => limits.format({ 'order.created': -1 })).toThrow(/^LIMITS /);
  });
});

describe('Setting', () => {
  it('exposes its name, description and default for the construct and for docs', () => {
    const setting: Setting<number> = batch;

    expect(setting).toMatchObject({ name: 'BATCH', description: 'records per batch', defaultValue: 7 });
    expect(deadline.defaultValue).toBeUndefined();
  });
});
