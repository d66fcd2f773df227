import { describe, expect, it } from 'vitest';
import { jsonContentTypeProblem } from '../../../functions/http/content-type.ts';

describe('jsonContentTypeProblem', () => {
  it.each([
    'application/json',
    'Application/JSON',
    ' application/json ',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; CHARSET=Utf-8',
    'application/json; version=2',
    'application/json;',
  ])('accepts %j', (header) => {
    expect(jsonContentTypeProblem(header)).toBeUndefined();
  });

  it.each([
    [undefined, 'is missing'],
    ['', 'is missing'],
    ['   ', 'is missing'],
    ['text/plain', 'is "text/plain"'],
    ['text/plain; charset=utf-8', 'is "text/plain"'],
    ['application/x-www-form-urlencoded', 'is "application/x-www-form-urlencoded"'],
    ['application/jsonp', 'is "application/jsonp"'],
    ['application/merge-patch+json', 'is "application/merge-patch+json"'],
    ['application / json', 'is "application / json"'],
    ['application/json; charset=latin1', 'has charset "latin1"'],
    ['application/json; charset="utf-16"', 'has charset "utf-16"'],
    ['application/json; charset=utf8', 'has charset "utf8"'],
    ['application/json; charset=utf-8; charset=iso-8859-1', 'has charset "iso-8859-1"'],
  ])('refuses %j: it %s', (header, problem) => {
    expect(jsonContentTypeProblem(header)).toContain(problem);
  });

  it('tells the client what to send', () => {
    expect(jsonContentTypeProblem('text/plain')).toBe('is "text/plain"; send application/json');
  });
});
