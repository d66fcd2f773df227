import { describe, expect, it } from 'vitest';
import {
  integerSetting,
  requireIntegerSetting,
  requireSetting,
} from '../../../shared/config/require-setting.ts';
import { ConfigError, OutboxErrorCode } from '../../../shared/errors.ts';

describe('requireSetting', () => {
  it('returns the value of a setting that is present', () => {
    expect(requireSetting({ ORDERS_TABLE: 'orders' }, 'ORDERS_TABLE')).toBe('orders');
  });

  it.each([
    ['missing', {}],
    ['empty', { ORDERS_TABLE: '' }],
  ])('throws a ConfigError naming a %s setting', (_, env) => {
    const error = (() => {
      try {
        requireSetting(env, 'ORDERS_TABLE');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();

    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe(OutboxErrorCode.INVALID_CONFIG);
    expect((error as ConfigError).message).toBe('ORDERS_TABLE is not set');
  });
});

describe('integerSetting', () => {
  it('uses the default when the setting is absent', () => {
    expect(integerSetting({}, 'BATCH', 7)).toBe(7);
  });

  it.each([
    ['0', 0],
    ['300000', 300_000],
  ])('reads "%s" as %d (0 is a real value, not absent)', (raw, expected) => {
    expect(integerSetting({ BATCH: raw }, 'BATCH', 7)).toBe(expected);
  });

  it.each(['', ' ', '-1', '1.5', 'ten', '1e3', '0x10', '5 '])(
    'throws a ConfigError naming the setting for "%s" instead of guessing',
    (raw) => {
      expect(() => integerSetting({ BATCH: raw }, 'BATCH', 7)).toThrow(ConfigError);
      expect(() => integerSetting({ BATCH: raw }, 'BATCH', 7)).toThrow(
        /BATCH must be an integer of at least 0/,
      );
    },
  );
});

describe('minimums', () => {
  it('refuses a value below the minimum, naming the setting', () => {
    expect(() => integerSetting({ CONFIRM_DEADLINE_MS: '0' }, 'CONFIRM_DEADLINE_MS', 300_000, 1_000)).toThrow(
      /CONFIRM_DEADLINE_MS must be an integer of at least 1000, got "0"/,
    );
  });

  it('requires a required integer setting and checks it', () => {
    expect(() => requireIntegerSetting({}, 'MAX_RECEIVE_COUNT')).toThrow(/MAX_RECEIVE_COUNT is not set/);
    expect(() => requireIntegerSetting({ MAX_RECEIVE_COUNT: '0' }, 'MAX_RECEIVE_COUNT')).toThrow(ConfigError);
    expect(requireIntegerSetting({ MAX_RECEIVE_COUNT: '5' }, 'MAX_RECEIVE_COUNT')).toBe(5);
  });
});
