import { describe, expect, it } from 'vitest';
import { compileFilters } from '../../infra/dev/local/events/event-filter.ts';
import { LocalRuntimeError } from '../../infra/dev/local/local-runtime-error.ts';

const insert = {
  eventName: 'INSERT',
  dynamodb: { NewImage: { topic: { S: 'order.created' }, attempts: { N: '0' } } },
};
const modify = { ...insert, eventName: 'MODIFY' };

describe('compileFilters', () => {
  it('passes only records whose field equals one of the listed values (the topology relay filter)', () => {
    const matches = compileFilters([{ eventName: ['INSERT'] }]);
    expect(matches(insert)).toBe(true);
    expect(matches(modify)).toBe(false);
  });

  it('passes everything when there are no filters, as a mapping without criteria does', () => {
    expect(compileFilters([])(modify)).toBe(true);
  });

  it('matches nested objects field by field', () => {
    const matches = compileFilters([
      { dynamodb: { NewImage: { topic: { S: ['order.created', 'order.cancelled'] } } } },
    ]);
    expect(matches(insert)).toBe(true);
    expect(matches({ dynamodb: { NewImage: { topic: { S: 'stock.changed' } } } })).toBe(false);
    expect(matches({ dynamodb: {} })).toBe(false);
    expect(matches('not an object')).toBe(false);
  });

  it('requires every field of a pattern and any one of several patterns', () => {
    const both = compileFilters([{ eventName: ['INSERT'], dynamodb: { NewImage: { topic: { S: ['x'] } } } }]);
    expect(both(insert)).toBe(false);
    const either = compileFilters([{ eventName: ['REMOVE'] }, { eventName: ['MODIFY'] }]);
    expect(either(modify)).toBe(true);
    expect(either(insert)).toBe(false);
  });

  it('compares values exactly, types included', () => {
    const matches = compileFilters([{ count: [1], flag: [true], nothing: [null] }]);
    expect(matches({ count: 1, flag: true, nothing: null })).toBe(true);
    expect(matches({ count: '1', flag: true, nothing: null })).toBe(false);
    expect(matches({ count: 1, flag: true })).toBe(false);
  });

  it('matches an array in the event when any element matches', () => {
    expect(compileFilters([{ tags: ['b'] }])({ tags: ['a', 'b'] })).toBe(true);
    expect(compileFilters([{ tags: ['c'] }])({ tags: ['a', 'b'] })).toBe(false);
  });

  it('supports the prefix, exists and anything-but operators', () => {
    expect(compileFilters([{ topic: [{ prefix: 'order.' }] }])({ topic: 'order.created' })).toBe(true);
    expect(compileFilters([{ topic: [{ prefix: 'order.' }] }])({ topic: 'stock.changed' })).toBe(false);
    expect(compileFilters([{ lastError: [{ exists: false }] }])({ topic: 'x' })).toBe(true);
    expect(compileFilters([{ lastError: [{ exists: true }] }])({ topic: 'x' })).toBe(false);
    expect(compileFilters([{ eventName: [{ 'anything-but': ['REMOVE'] }] }])(insert)).toBe(true);
    expect(compileFilters([{ eventName: [{ 'anything-but': 'INSERT' }] }])(insert)).toBe(false);
  });

  it('supports the suffix and numeric operators, numeric on stream images’ number strings too', () => {
    expect(compileFilters([{ sku: [{ suffix: '-EU' }] }])({ sku: 'APPLE-EU' })).toBe(true);
    expect(compileFilters([{ sku: [{ suffix: '-EU' }] }])({ sku: 'APPLE-US' })).toBe(false);
    const between = compileFilters([{ qty: { N: [{ numeric: ['>', 0, '<=', 5] }] } }]);
    expect(between({ qty: { N: '5' } })).toBe(true);
    expect(between({ qty: { N: '6' } })).toBe(false);
    expect(between({ qty: { N: '0' } })).toBe(false);
    expect(between({ qty: { S: '3' } })).toBe(false);
  });

  it('refuses syntax it does not implement instead of matching differently from AWS', () => {
    expect(() => compileFilters([{ ip: [{ cidr: '10.0.0.0/24' }] }])).toThrow(LocalRuntimeError);
    expect(() => compileFilters([{ size: [{ numeric: ['~', 0] }] }])).toThrow(/malformed numeric rule/);
    expect(() => compileFilters([{ eventName: 'INSERT' }])).toThrow(/array of values or a nested object/);
    expect(() => compileFilters([{ eventName: [{ prefix: 'I', exists: true }] }])).toThrow(
      /exactly one operator/,
    );
  });
});
