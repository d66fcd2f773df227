/**
 * DynamoDB numbers, exactly: decimals of up to 38 significant digits, compared and added without the
 * rounding of JavaScript doubles (DynamoDB answers 0.1 + 0.2 = 0.3). An item value is a number when the
 * double holds it exactly, and a `NumberValue` (lib-dynamodb's wrapper of the decimal text) otherwise.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';

/** A number as the in-memory table holds it. */
export type DynamoNumber = number | bigint | NumberValue;

/** A number DynamoDB would refuse: not a decimal, more than 38 significant digits, or out of range. */
export class InvalidNumberError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNumberError';
  }
}

/** `mantissa × 10^exponent`, with no trailing zeros in the mantissa (zero is `0n × 10^0`). */
interface Decimal {
  readonly mantissa: bigint;
  readonly exponent: number;
}

// DynamoDB keeps 38 significant digits; magnitudes from 1E-130 to under 1E+126.
const LIMITS = { digits: 38, minExponent: -130, maxExponent: 125 } as const;
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Whether `value` is a number of an item (a double, a bigint or a `NumberValue`). */
export function isDynamoNumber(value: unknown): value is DynamoNumber {
  return typeof value === 'number' || typeof value === 'bigint' || value instanceof NumberValue;
}

/**
 * The canonical text DynamoDB returns for a number: no exponent, no leading or trailing zeros, no `+`.
 * Throws {@link InvalidNumberError} for text DynamoDB would refuse.
 * @example
 * canonicalNumber('01.50E1'); // '15'
 */
export function canonicalNumber(text: string): string {
  return formatDecimal(checkedDecimal(text));
}

/**
 * The item value for a number's text: a double when it holds the number exactly (and is a safe integer or
 * has a fraction), otherwise a `NumberValue` with the canonical text, so nothing is ever rounded.
 */
export function exactNumber(text: string): number | NumberValue {
  const canonical = canonicalNumber(text);
  return fromCanonical(canonical);
}

/** Compares two numbers by value (a negative result: `a` is smaller). */
export function compareNumbers(a: DynamoNumber, b: DynamoNumber): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareDecimals(toDecimal(a), toDecimal(b));
}

/** `a + b`, or `a - b` with `subtract`, exactly; throws {@link InvalidNumberError} past 38 digits. */
export function addNumbers(a: DynamoNumber, b: DynamoNumber, subtract = false): number | NumberValue {
  if (typeof a === 'number' && typeof b === 'number' && Number.isInteger(a) && Number.isInteger(b)) {
    const sum = subtract ? a - b : a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const right = toDecimal(b);
  const total = addDecimals(toDecimal(a), subtract ? { ...right, mantissa: -right.mantissa } : right);
  return fromCanonical(formatDecimal(checkRange(total)));
}

/** The canonical text of an item's number. */
export function numberText(value: DynamoNumber): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return formatDecimal(toDecimal(value));
}

function fromCanonical(canonical: string): number | NumberValue {
  const double = Number(canonical);
  const exact = String(double) === canonical && (!Number.isInteger(double) || Number.isSafeInteger(double));
  return exact ? double : new NumberValue(canonical);
}

function toDecimal(value: DynamoNumber): Decimal {
  if (typeof value === 'bigint') return normalize(value, 0);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidNumberError(`${value} is not a number DynamoDB can store`);
    return parseDecimal(String(value));
  }
  return parseDecimal(value.toString());
}

function checkedDecimal(text: string): Decimal {
  return checkRange(parseDecimal(text));
}

function parseDecimal(text: string): Decimal {
  const match = DECIMAL.exec(text.trim());
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (!match || whole + fraction === '') throw new InvalidNumberError(`"${text}" is not a number`);
  const digits = BigInt(whole + fraction);
  const exponent = Number(match[4] ?? '0') - fraction.length;
  return normalize(match[1] === '-' ? -digits : digits, exponent);
}

function normalize(mantissa: bigint, exponent: number): Decimal {
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0 };
  let m = mantissa;
  let e = exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  return { mantissa: m, exponent: e };
}

function checkRange(decimal: Decimal): Decimal {
  if (decimal.mantissa === 0n) return decimal;
  const digits = (decimal.mantissa < 0n ? -decimal.mantissa : decimal.mantissa).toString().length;
  if (digits > LIMITS.digits) {
    throw new InvalidNumberError('Attempting to store more than 38 significant digits in a Number');
  }
  // The magnitude is 0.d1d2… × 10^(digits + exponent).
  const magnitude = digits + decimal.exponent - 1;
  if (magnitude > LIMITS.maxExponent) {
    throw new InvalidNumberError(
      'Number overflow. Attempting to store a number with magnitude larger than supported range',
    );
  }
  if (magnitude < LIMITS.minExponent) {
    throw new InvalidNumberError(
      'Number underflow. Attempting to store a number with magnitude smaller than supported range',
    );
  }
  return decimal;
}

function formatDecimal({ mantissa, exponent }: Decimal): string {
  const sign = mantissa < 0n ? '-' : '';
  const digits = (mantissa < 0n ? -mantissa : mantissa).toString();
  if (exponent >= 0) return `${sign}${digits}${'0'.repeat(mantissa === 0n ? 0 : exponent)}`;
  const point = digits.length + exponent;
  if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${sign}0.${'0'.repeat(-point)}${digits}`;
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const exponent = Math.min(a.exponent, b.exponent);
  return [
    a.mantissa * 10n ** BigInt(a.exponent - exponent),
    b.mantissa * 10n ** BigInt(b.exponent - exponent),
    exponent,
  ];
}

function compareDecimals(a: Decimal, b: Decimal): number {
  const [left, right] = aligned(a, b);
  return left === right ? 0 : left < right ? -1 : 1;
}

function addDecimals(a: Decimal, b: Decimal): Decimal {
  const [left, right, exponent] = aligned(a, b);
  return normalize(left + right, exponent);
}
