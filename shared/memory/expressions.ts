/**
 * A small evaluator for the DynamoDB expression subset that the library and typical apps write: conditions
 * (comparisons, IN, BETWEEN, attribute_exists / attribute_not_exists, begins_with, size, AND / OR / NOT,
 * parentheses), key conditions, projections, and update expressions (SET with `+` / `-`, if_not_exists and
 * list_append; REMOVE; ADD; DELETE). It backs the in-memory table used by tests, the scale drill and the local
 * runtime's embedded backend; anything outside the subset throws, never guesses. What DynamoDB refuses (an
 * undefined placeholder, a reserved word, two update paths that overlap, arithmetic on a missing attribute) is
 * refused with its `ValidationException` and message. Numbers are compared and added exactly (see
 * exact-numbers.ts).
 */
import { cloneValue } from './clone-item.ts';
import { addNumbers, compareNumbers, isDynamoNumber } from './exact-numbers.ts';
import { RESERVED_WORDS } from './reserved-words.ts';
import { ValidationError } from './validation-error.ts';

/** A document item: attribute name → value, as the Document client sees it. */
export type Item = Record<string, unknown>;

/** Placeholders of an expression. */
export interface ExpressionContext {
  readonly names?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, unknown>>;
}

/** The request parameters that hold an expression, as DynamoDB names them in its messages. */
export type ExpressionKind =
  | 'ConditionExpression'
  | 'UpdateExpression'
  | 'KeyConditionExpression'
  | 'FilterExpression'
  | 'ProjectionExpression';

/** An expression outside the supported subset, or a malformed one. */
export class UnsupportedExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedExpressionError';
  }
}

type Token = { kind: 'name' | 'value' | 'word' | 'symbol' | 'number'; text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[=<>(),.+\-[\]]))/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(expression);
    if (!match)
      throw new UnsupportedExpressionError(`cannot read expression at "${expression.slice(index)}"`);
    index = pattern.lastIndex;
    if (match[1]) tokens.push({ kind: 'name', text: match[1] });
    else if (match[2]) tokens.push({ kind: 'value', text: match[2] });
    else if (match[3]) tokens.push({ kind: 'word', text: match[3] });
    else if (match[4]) tokens.push({ kind: 'number', text: match[4] });
    else if (match[5]) tokens.push({ kind: 'symbol', text: match[5] });
  }
  return tokens;
}

/** A path into an item: attribute names and list indexes. */
type Path = (string | number)[];

type Operand =
  | { kind: 'path'; path: Path }
  | { kind: 'value'; value: unknown }
  | { kind: 'size'; path: Path }
  | { kind: 'ifNotExists'; path: Path; fallback: Operand }
  | { kind: 'listAppend'; first: Operand; second: Operand }
  | { kind: 'arithmetic'; op: '+' | '-'; left: Operand; right: Operand };

class Parser {
  #tokens: Token[];
  #position = 0;
  readonly #context: ExpressionContext;

  constructor(expression: string, context: ExpressionContext) {
    this.#tokens = tokenize(expression);
    this.#context = context;
  }

  get done(): boolean {
    return this.#position >= this.#tokens.length;
  }

  peek(): Token | undefined {
    return this.#tokens[this.#position];
  }

  isWord(word: string): boolean {
    const token = this.peek();
    return token?.kind === 'word' && token.text.toUpperCase() === word;
  }

  isSymbol(symbol: string): boolean {
    const token = this.peek();
    return token?.kind === 'symbol' && token.text === symbol;
  }

  next(): Token {
    const token = this.#tokens[this.#position];
    if (!token) throw new UnsupportedExpressionError('expression ended early');
    this.#position += 1;
    return token;
  }

  expectSymbol(symbol: string): void {
    const token = this.next();
    if (token.kind !== 'symbol' || token.text !== symbol) {
      throw new UnsupportedExpressionError(`expected "${symbol}", found "${token.text}"`);
    }
  }

  path(): Path {
    const path: Path = [this.attributeName(this.next())];
    while (this.isSymbol('.') || this.isSymbol('[')) {
      if (this.next().text === '.') path.push(this.attributeName(this.next()));
      else {
        path.push(Number(this.next().text));
        this.expectSymbol(']');
      }
    }
    return path;
  }

  attributeName(token: Token): string {
    if (token.kind === 'word') return token.text;
    if (token.kind === 'name') {
      const name = this.#context.names?.[token.text];
      if (name === undefined)
        throw new UnsupportedExpressionError(`no value for name placeholder ${token.text}`);
      return name;
    }
    throw new UnsupportedExpressionError(`expected an attribute name, found "${token.text}"`);
  }

  operand(): Operand {
    const token = this.peek();
    if (token?.kind === 'value') {
      this.next();
      const value = this.#context.values?.[token.text];
      // An undefined value is no value: the Document client drops it before DynamoDB sees the request.
      if (value === undefined) throw new UnsupportedExpressionError(`no value for placeholder ${token.text}`);
      return { kind: 'value', value };
    }
    if (this.isWord('SIZE')) {
      this.next();
      this.expectSymbol('(');
      const path = this.path();
      this.expectSymbol(')');
      return { kind: 'size', path };
    }
    if (this.isWord('IF_NOT_EXISTS')) {
      this.next();
      this.expectSymbol('(');
      const path = this.path();
      this.expectSymbol(',');
      const fallback = this.operand();
      this.expectSymbol(')');
      return { kind: 'ifNotExists', path, fallback };
    }
    if (this.isWord('LIST_APPEND')) {
      this.next();
      this.expectSymbol('(');
      const first = this.operand();
      this.expectSymbol(',');
      const second = this.operand();
      this.expectSymbol(')');
      return { kind: 'listAppend', first, second };
    }
    return { kind: 'path', path: this.path() };
  }

  updateValue(): Operand {
    const left = this.operand();
    if (this.isSymbol('+') || this.isSymbol('-')) {
      const op = this.next().text as '+' | '-';
      return { kind: 'arithmetic', op, left, right: this.operand() };
    }
    return left;
  }
}

function resolvePath(item: Item, path: Path): unknown {
  let current: unknown = item;
  for (const step of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

function evaluate(operand: Operand, item: Item): unknown {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return resolvePath(item, operand.path);
    case 'size': {
      const value = resolvePath(item, operand.path);
      if (typeof value === 'string') return Buffer.byteLength(value);
      if (value instanceof Uint8Array) return value.byteLength;
      if (Array.isArray(value)) return value.length;
      if (value instanceof Set) return value.size;
      if (value && typeof value === 'object' && !isDynamoNumber(value)) return Object.keys(value).length;
      return undefined;
    }
    case 'ifNotExists': {
      const value = resolvePath(item, operand.path);
      return value === undefined ? evaluate(operand.fallback, item) : value;
    }
    case 'listAppend': {
      const first = operandOf({ operator: 'list_append', operand: operand.first, item });
      const second = operandOf({ operator: 'list_append', operand: operand.second, item });
      if (!Array.isArray(first) || !Array.isArray(second)) {
        throw incorrectOperand('list_append', Array.isArray(first) ? second : first);
      }
      return [...first, ...second];
    }
    case 'arithmetic': {
      const left = operandOf({ operator: operand.op, operand: operand.left, item });
      const right = operandOf({ operator: operand.op, operand: operand.right, item });
      if (!isDynamoNumber(left) || !isDynamoNumber(right)) {
        throw incorrectOperand(operand.op, isDynamoNumber(left) ? right : left);
      }
      return addNumbers(left, right, operand.op === '-');
    }
  }
}

/** An operand of `+`, `-` or list_append; DynamoDB refuses one that names a missing attribute (no implicit 0). */
function operandOf(use: { operator: string; operand: Operand; item: Item }): unknown {
  const value = evaluate(use.operand, use.item);
  if (value === undefined) {
    throw new ValidationError(
      'The provided expression refers to an attribute that does not exist in the item',
    );
  }
  return value;
}

function incorrectOperand(operator: string, value: unknown): ValidationError {
  return new ValidationError(
    `Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: ${operator}, operand type: ${typeName(value)}`,
  );
}

/** DynamoDB's type descriptor of a value (`S`, `N`, `M`, …), for messages. */
function typeName(value: unknown): string {
  if (typeof value === 'string') return 'S';
  if (isDynamoNumber(value)) return 'N';
  if (value instanceof Uint8Array) return 'B';
  if (typeof value === 'boolean') return 'BOOL';
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return 'L';
  if (value instanceof Set) {
    const [first] = value;
    return `${typeName(first)}S`;
  }
  return 'M';
}

/**
 * DynamoDB's order of two values of one scalar type: numbers by value, strings by character code (not by
 * locale, which would put `a` before `B`), binaries byte by byte; `undefined` for values of different types.
 */
export function compareValues(left: unknown, right: unknown): number | undefined {
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  if (isDynamoNumber(left) && isDynamoNumber(right)) return compareNumbers(left, right);
  if (left instanceof Uint8Array && right instanceof Uint8Array) return Buffer.compare(left, right);
  return undefined;
}

/** Whether two item values are equal as DynamoDB sees them: by value, sets in any order. */
export function sameValue(left: unknown, right: unknown): boolean {
  if (left === undefined || right === undefined) return false;
  if (left === right) return true;
  const order = compareValues(left, right);
  if (order !== undefined) return order === 0;
  if (left instanceof Set && right instanceof Set) {
    return (
      left.size === right.size &&
      [...left].every((member) => [...right].some((other) => sameValue(member, other)))
    );
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((element, index) => sameValue(element, right[index]));
  }
  if (isMap(left) && isMap(right)) {
    const keys = Object.keys(left);
    return keys.length === Object.keys(right).length && keys.every((key) => sameValue(left[key], right[key]));
  }
  return false;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Set) &&
    !(value instanceof Uint8Array) &&
    !isDynamoNumber(value)
  );
}

function parseOr(parser: Parser): (item: Item) => boolean {
  let left = parseAnd(parser);
  while (parser.isWord('OR')) {
    parser.next();
    const l = left;
    const r = parseAnd(parser);
    left = (item) => l(item) || r(item);
  }
  return left;
}

function parseAnd(parser: Parser): (item: Item) => boolean {
  let left = parseNot(parser);
  while (parser.isWord('AND')) {
    parser.next();
    const l = left;
    const r = parseNot(parser);
    left = (item) => l(item) && r(item);
  }
  return left;
}

function parseNot(parser: Parser): (item: Item) => boolean {
  if (parser.isWord('NOT')) {
    parser.next();
    const inner = parseNot(parser);
    return (item) => !inner(item);
  }
  return parsePrimary(parser);
}

function parsePrimary(parser: Parser): (item: Item) => boolean {
  if (parser.isSymbol('(')) {
    parser.next();
    const inner = parseOr(parser);
    parser.expectSymbol(')');
    return inner;
  }
  for (const fn of ['ATTRIBUTE_EXISTS', 'ATTRIBUTE_NOT_EXISTS'] as const) {
    if (parser.isWord(fn)) {
      parser.next();
      parser.expectSymbol('(');
      const path = parser.path();
      parser.expectSymbol(')');
      return fn === 'ATTRIBUTE_EXISTS'
        ? (item) => resolvePath(item, path) !== undefined
        : (item) => resolvePath(item, path) === undefined;
    }
  }
  if (parser.isWord('BEGINS_WITH')) {
    parser.next();
    parser.expectSymbol('(');
    const subject = parser.operand();
    parser.expectSymbol(',');
    const prefix = parser.operand();
    parser.expectSymbol(')');
    return (item) => beginsWith(evaluate(subject, item), evaluate(prefix, item));
  }
  const left = parser.operand();
  if (parser.isWord('IN')) {
    parser.next();
    parser.expectSymbol('(');
    const options = [parser.operand()];
    while (parser.isSymbol(',')) {
      parser.next();
      options.push(parser.operand());
    }
    parser.expectSymbol(')');
    return (item) => options.some((option) => sameValue(evaluate(left, item), evaluate(option, item)));
  }
  if (parser.isWord('BETWEEN')) {
    parser.next();
    const low = parser.operand();
    if (!parser.isWord('AND')) throw new UnsupportedExpressionError('BETWEEN needs AND');
    parser.next();
    const high = parser.operand();
    return (item) => {
      const value = evaluate(left, item);
      const a = compareValues(value, evaluate(low, item));
      const b = compareValues(value, evaluate(high, item));
      return a !== undefined && b !== undefined && a >= 0 && b <= 0;
    };
  }
  const operator = parser.next();
  const right = parser.operand();
  const comparisons: Record<string, (c: number) => boolean> = {
    '<': (c) => c < 0,
    '<=': (c) => c <= 0,
    '>': (c) => c > 0,
    '>=': (c) => c >= 0,
  };
  if (operator.text === '=') return (item) => sameValue(evaluate(left, item), evaluate(right, item));
  if (operator.text === '<>') {
    return (item) => {
      const l = evaluate(left, item);
      return l !== undefined && !sameValue(l, evaluate(right, item));
    };
  }
  const test = comparisons[operator.text];
  if (!test) throw new UnsupportedExpressionError(`unsupported operator "${operator.text}"`);
  return (item) => {
    const c = compareValues(evaluate(left, item), evaluate(right, item));
    return c !== undefined && test(c);
  };
}

function beginsWith(subject: unknown, prefix: unknown): boolean {
  if (typeof subject === 'string' && typeof prefix === 'string') return subject.startsWith(prefix);
  if (subject instanceof Uint8Array && prefix instanceof Uint8Array) {
    return (
      prefix.byteLength <= subject.byteLength &&
      Buffer.compare(subject.subarray(0, prefix.byteLength), prefix) === 0
    );
  }
  return false;
}

/** Compiles a condition (or key condition) expression into a predicate over an item. */
export function compileCondition(expression: string, context: ExpressionContext): (item: Item) => boolean {
  const parser = new Parser(expression, context);
  const predicate = parseOr(parser);
  if (!parser.done) throw new UnsupportedExpressionError(`unexpected "${parser.peek()?.text}" in condition`);
  return predicate;
}

/** Applies an update expression (SET, REMOVE, ADD, DELETE) to a copy of `item` and returns the copy. */
export function applyUpdate(item: Item, expression: string, context: ExpressionContext): Item {
  const { assignments, removals, additions, deletions } = parseUpdate(expression, context);
  const updated = cloneValue(item);
  // DynamoDB evaluates every right-hand side against the item as it was before the update.
  const values = assignments.map(({ value }) => evaluate(value, item));
  for (const [index, { path }] of assignments.entries()) setPath(updated, path, values[index]);
  for (const path of removals) setPath(updated, path, undefined);
  for (const { path, value } of additions) setPath(updated, path, added(resolvePath(item, path), value));
  for (const { path, value } of deletions)
    setPath(updated, path, withoutMembers(resolvePath(item, path), value));
  return updated;
}

/** The top-level attributes an update expression changes (what UPDATED_OLD / UPDATED_NEW return). */
export function updatedAttributeNames(expression: string, context: ExpressionContext): string[] {
  const { assignments, removals, additions, deletions } = parseUpdate(expression, context);
  const paths = [...assignments, ...additions, ...deletions].map(({ path }) => path).concat(removals);
  return [
    ...new Set(paths.map((path) => path[0]).filter((name): name is string => typeof name === 'string')),
  ];
}

interface ParsedUpdate {
  readonly assignments: { path: Path; value: Operand }[];
  readonly removals: Path[];
  /** ADD: a number added to a number, or members added to a set. */
  readonly additions: { path: Path; value: unknown }[];
  /** DELETE: members taken out of a set. */
  readonly deletions: { path: Path; value: unknown }[];
}

function parseUpdate(expression: string, context: ExpressionContext): ParsedUpdate {
  const parser = new Parser(expression, context);
  const parsed: ParsedUpdate = { assignments: [], removals: [], additions: [], deletions: [] };
  while (!parser.done) {
    const clause = parser.next().text.toUpperCase();
    if (clause !== 'SET' && clause !== 'REMOVE' && clause !== 'ADD' && clause !== 'DELETE') {
      throw new UnsupportedExpressionError(`unsupported update clause "${clause}"`);
    }
    do {
      if (parser.isSymbol(',')) parser.next();
      const path = parser.path();
      if (clause === 'SET') {
        parser.expectSymbol('=');
        parsed.assignments.push({ path, value: parser.updateValue() });
      } else if (clause === 'REMOVE') {
        parsed.removals.push(path);
      } else {
        const operand = parser.operand();
        if (operand.kind !== 'value')
          throw new UnsupportedExpressionError(`${clause} takes a value placeholder`);
        (clause === 'ADD' ? parsed.additions : parsed.deletions).push({ path, value: operand.value });
      }
    } while (parser.isSymbol(','));
  }
  refuseOverlaps([
    ...parsed.assignments.map(({ path }) => path),
    ...parsed.removals,
    ...parsed.additions.map(({ path }) => path),
    ...parsed.deletions.map(({ path }) => path),
  ]);
  return parsed;
}

/**
 * DynamoDB refuses an update that touches one path twice, or a path and a part of it (`SET a = :x, a = :y`;
 * `SET a.b = :x REMOVE a`): the outcome would depend on the order of the clauses.
 */
function refuseOverlaps(paths: readonly Path[]): void {
  for (const [index, one] of paths.entries()) {
    for (const two of paths.slice(index + 1)) {
      const shorter = one.length <= two.length ? one : two;
      const longer = shorter === one ? two : one;
      if (shorter.every((step, position) => longer[position] === step)) {
        throw new ValidationError(
          'Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of ' +
            `these paths; path one: ${pathText(one)}, path two: ${pathText(two)}`,
        );
      }
    }
  }
}

/** A path as DynamoDB prints it in messages: `[a, b, [0]]`. */
function pathText(path: Path): string {
  return `[${path.map((step) => (typeof step === 'number' ? `[${step}]` : step)).join(', ')}]`;
}

/** ADD: a number plus a number (a missing attribute counts as 0), or a set with more members. */
function added(current: unknown, value: unknown): unknown {
  if (isDynamoNumber(value)) {
    if (current === undefined) return value;
    if (!isDynamoNumber(current)) throw incorrectDataType();
    return addNumbers(current, value);
  }
  if (value instanceof Set) {
    if (current === undefined) return new Set(value);
    if (!(current instanceof Set)) throw incorrectDataType();
    const members = [...current];
    for (const member of value) if (!members.some((known) => sameValue(known, member))) members.push(member);
    return new Set(members);
  }
  throw incorrectDataType();
}

function incorrectDataType(): ValidationError {
  return new ValidationError('An operand in the update expression has an incorrect data type');
}

/** DELETE: a set without the given members; an emptied set goes, as DynamoDB keeps no empty sets. */
function withoutMembers(current: unknown, value: unknown): unknown {
  if (!(value instanceof Set)) throw incorrectDataType();
  if (current === undefined) return undefined;
  if (!(current instanceof Set)) throw incorrectDataType();
  const left = [...current].filter((member) => ![...value].some((gone) => sameValue(gone, member)));
  return left.length === 0 ? undefined : new Set(left);
}

function setPath(item: Item, path: Path, value: unknown): void {
  let container: Record<string | number, unknown> = item;
  for (const step of path.slice(0, -1)) {
    const next = container[step];
    if (next === null || typeof next !== 'object') {
      throw new ValidationError('The document path provided in the update expression is invalid for update');
    }
    container = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (value === undefined) delete container[last];
  else container[last] = value;
}

/** One term of a key condition: the attribute it tests and the test. */
export interface KeyConditionTerm {
  readonly attribute: string;
  /** `=`, `<`, `<=`, `>`, `>=`, `BETWEEN` or `BEGINS_WITH`. */
  readonly operator: string;
  /** The operands after the attribute (one, or two for BETWEEN). */
  readonly values: readonly unknown[];
  readonly test: (item: Item) => boolean;
}

/**
 * Reads a Query's key condition: terms joined by AND, each a comparison, BETWEEN or begins_with of one
 * top-level attribute with values. The caller checks the terms against the key schema.
 * @example
 * compileKeyCondition('#pk = :pk AND #sk <= :now', context); // two terms, on the names #pk and #sk stand for
 */
export function compileKeyCondition(expression: string, context: ExpressionContext): KeyConditionTerm[] {
  const parser = new Parser(expression, context);
  const terms = [keyTerm(parser)];
  while (parser.isWord('AND')) {
    parser.next();
    terms.push(keyTerm(parser));
  }
  if (!parser.done)
    throw new UnsupportedExpressionError(`unexpected "${parser.peek()?.text}" in key condition`);
  return terms;
}

function keyTerm(parser: Parser): KeyConditionTerm {
  if (parser.isSymbol('(')) {
    parser.next();
    const inner = keyTerm(parser);
    parser.expectSymbol(')');
    return inner;
  }
  if (parser.isWord('BEGINS_WITH')) {
    parser.next();
    parser.expectSymbol('(');
    const attribute = keyAttribute(parser);
    parser.expectSymbol(',');
    const prefix = keyValue(parser);
    parser.expectSymbol(')');
    return {
      attribute,
      operator: 'BEGINS_WITH',
      values: [prefix],
      test: (item) => beginsWith(item[attribute], prefix),
    };
  }
  const attribute = keyAttribute(parser);
  if (parser.isWord('BETWEEN')) {
    parser.next();
    const low = keyValue(parser);
    if (!parser.isWord('AND')) throw new UnsupportedExpressionError('BETWEEN needs AND');
    parser.next();
    const high = keyValue(parser);
    return {
      attribute,
      operator: 'BETWEEN',
      values: [low, high],
      test: (item) => {
        const a = compareValues(item[attribute], low);
        const b = compareValues(item[attribute], high);
        return a !== undefined && b !== undefined && a >= 0 && b <= 0;
      },
    };
  }
  const operator = parser.next().text;
  const value = keyValue(parser);
  const tests: Record<string, (c: number) => boolean> = {
    '=': (c) => c === 0,
    '<': (c) => c < 0,
    '<=': (c) => c <= 0,
    '>': (c) => c > 0,
    '>=': (c) => c >= 0,
  };
  const test = tests[operator];
  if (!test) throw new UnsupportedExpressionError(`unsupported operator "${operator}" in key condition`);
  return {
    attribute,
    operator,
    values: [value],
    test: (item) => {
      const c = compareValues(item[attribute], value);
      return c !== undefined && test(c);
    },
  };
}

function keyAttribute(parser: Parser): string {
  const path = parser.path();
  const [first] = path;
  if (path.length !== 1 || typeof first !== 'string') {
    throw new UnsupportedExpressionError('a key condition names top-level key attributes only');
  }
  return first;
}

function keyValue(parser: Parser): unknown {
  const operand = parser.operand();
  if (operand.kind !== 'value')
    throw new UnsupportedExpressionError('a key condition compares with values only');
  return operand.value;
}

/** The attribute paths of a projection expression (`#status, a.b[0]`). */
export function compileProjection(expression: string, context: ExpressionContext): (item: Item) => Item {
  const parser = new Parser(expression, context);
  const paths = [parser.path()];
  while (parser.isSymbol(',')) {
    parser.next();
    paths.push(parser.path());
  }
  if (!parser.done) throw new UnsupportedExpressionError(`unexpected "${parser.peek()?.text}" in projection`);
  return (item) => project(item, paths);
}

/**
 * The parts of `item` the paths name, nested as in the item; list elements a path picks keep their order
 * and close up, as DynamoDB returns them.
 */
function project(item: Item, paths: readonly Path[]): Item {
  const picked: Item = {};
  for (const path of paths) {
    const value = resolvePath(item, path);
    if (value !== undefined) placeAt(picked, path, cloneValue(value));
  }
  return compactLists(picked) as Item;
}

/** Places `value` at `path` in `target`, list indexes kept as object keys until {@link compactLists}. */
function placeAt(target: Record<string | number, unknown>, path: Path, value: unknown): void {
  let container = target;
  for (const [index, step] of path.entries()) {
    if (index === path.length - 1) {
      container[step] = value;
      return;
    }
    const next = container[step];
    const child: Record<string | number, unknown> =
      typeof next === 'object' && next !== null ? (next as Record<string | number, unknown>) : {};
    if (typeof path[index + 1] === 'number') Object.defineProperty(child, LIST_MARK, { value: true });
    container[step] = child;
    container = child;
  }
}

const LIST_MARK = Symbol('list');

function compactLists(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !(LIST_MARK in value || value.constructor === Object)) {
    return value;
  }
  const entries = Object.entries(value).map(([key, child]) => [key, compactLists(child)] as const);
  if (LIST_MARK in value) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, child]) => child);
  }
  return Object.fromEntries(entries);
}

/** The `#name` and `:value` placeholders an expression uses, to find ones a request defines but never uses. */
export function expressionPlaceholders(expression: string): { names: Set<string>; values: Set<string> } {
  const names = new Set<string>();
  const values = new Set<string>();
  for (const token of tokenize(expression)) {
    if (token.kind === 'name') names.add(token.text);
    if (token.kind === 'value') values.add(token.text);
  }
  return { names, values };
}

/** Words that are the expression language's own syntax where they stand, not attribute names. */
const SYNTAX_WORDS = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'SET', 'REMOVE', 'ADD', 'DELETE']);

/**
 * Refuses an expression as DynamoDB does before evaluating it: a `#name` or `:value` placeholder the request
 * does not define (an `undefined` value counts as not defined: the Document client drops it), or an attribute
 * named by a reserved word.
 * @example
 * validateExpression('SET #n = :n', { kind: 'UpdateExpression', context }); // throws a ValidationException
 */
export function validateExpression(
  expression: string,
  check: { readonly kind: ExpressionKind; readonly context: ExpressionContext },
): void {
  const { kind, context } = check;
  const tokens = tokenize(expression);
  for (const [index, token] of tokens.entries()) {
    if (token.kind === 'name' && context.names?.[token.text] === undefined) {
      throw new ValidationError(
        `Invalid ${kind}: An expression attribute name used in the document path is not defined; attribute name: ${token.text}`,
      );
    }
    if (token.kind === 'value' && context.values?.[token.text] === undefined) {
      throw new ValidationError(
        `Invalid ${kind}: An expression attribute value used in expression is not defined; attribute value: ${token.text}`,
      );
    }
    const word = token.text.toUpperCase();
    const isFunction = tokens[index + 1]?.text === '(';
    if (token.kind === 'word' && !isFunction && !SYNTAX_WORDS.has(word) && RESERVED_WORDS.has(word)) {
      throw new ValidationError(
        `Invalid ${kind}: Attribute name is a reserved keyword; reserved keyword: ${token.text}`,
      );
    }
  }
}
