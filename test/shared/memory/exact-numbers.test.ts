import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  addNumbers,
  canonicalNumber,
  compareNumbers,
  exactNumber,
  InvalidNumberError,
  isDynamoNumber,
  numberText,
} from '../../../shared/memory/exact-numbers.ts';

describe('canonicalNumber', () => {
  it('writes a number as DynamoDB returns it: no exponent, no leading or trailing zeros, no plus sign', () => {
    expect(
      ['01.50E1', '1.0', '-0', '+7', '.5', '5.', '1e2', '1.5e-3', '-000123.4500'].map(canonicalNumber),
    ).toEqual(['15', '1', '0', '7', '0.5', '5', '100', '0.0015', '-123.45']);
  });

  it('refuses text that is not a number, more than 38 significant digits, or a magnitude out of range', () => {
    for (const text of ['', 'abc', '1e', '--1', 'NaN', '1'.repeat(39), '1e126', '1e-131']) {
      expect(() => canonicalNumber(text), text).toThrow(InvalidNumberError);
    }
    expect(canonicalNumber('9'.repeat(38))).toBe('9'.repeat(38));
    expect(canonicalNumber('1e125')).toBe(`1${'0'.repeat(125)}`);
  });
});

describe('exactNumber', () => {
  it('gives a double only when the double holds the number exactly', () => {
    expect(exactNumber('42')).toBe(42);
    expect(exactNumber('0.1')).toBe(0.1);
    expect(exactNumber('9007199254740993')).toEqual(new NumberValue('9007199254740993'));
    expect(exactNumber('1e21')).toEqual(new NumberValue('1000000000000000000000'));
    expect(exactNumber('0.00000015')).toEqual(new NumberValue('0.00000015'));
  });
});

describe('compareNumbers and addNumbers', () => {
  it('compares doubles, bigints and NumberValues by value', () => {
    const big = new NumberValue('123456789012345678901234567890');
    expect(compareNumbers(1, 2)).toBeLessThan(0);
    expect(compareNumbers(big, 1)).toBeGreaterThan(0);
    expect(compareNumbers(new NumberValue('1.50'), 1.5)).toBe(0);
    expect(compareNumbers(10n, new NumberValue('9.99'))).toBeGreaterThan(0);
  });

  it('adds and subtracts exactly, where doubles would round', () => {
    expect(addNumbers(0.1, 0.2)).toBe(0.3);
    expect(addNumbers(1, 0.1, true)).toBe(0.9);
    expect(addNumbers(Number.MAX_SAFE_INTEGER, 2)).toEqual(new NumberValue('9007199254740993'));
    expect(addNumbers(new NumberValue('123456789012345678901234567890'), 1)).toEqual(
      new NumberValue('123456789012345678901234567891'),
    );
    expect(() => addNumbers(new NumberValue('9'.repeat(38)), 0.5)).toThrow(InvalidNumberError);
  });

  it('recognises every kind of number, and writes each canonically', () => {
    expect([1, 1n, new NumberValue('1'), '1', null].map(isDynamoNumber)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect([numberText(1e21), numberText(-5), numberText(new NumberValue('2.50')), numberText(7n)]).toEqual([
      '1000000000000000000000',
      '-5',
      '2.5',
      '7',
    ]);
  });
});
