/**
 * A small evaluator for the DynamoDB expression subset this library writes: conditions (comparisons, IN,
 * BETWEEN, attribute_exists / attribute_not_exists, begins_with, AND / OR / NOT, parentheses), key
 * conditions, and update expressions (SET with `+` / `-` and if_not_exists, REMOVE). It backs the
 * in-memory table used by tests and the scale drill; anything outside the subset throws, never guesses.
 */

/** A document item: attribute name → value, as the Document client sees it. */
export type Item = Record<string, unknown>;

/** Placeholders of an expression. */
export interface ExpressionContext {
  readonly names?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, unknown>>;
}

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
      if (!this.#context.values || !(token.text in this.#context.values)) {
        throw new UnsupportedExpressionError(`no value for placeholder ${token.text}`);
      }
      return { kind: 'value', value: this.#context.values[token.text] };
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
      if (Array.isArray(value)) return value.length;
      if (value instanceof Set) return value.size;
      if (value && typeof value === 'object') return Object.keys(value).length;
      return undefined;
    }
    case 'ifNotExists': {
      const value = resolvePath(item, operand.path);
      return value === undefined ? evaluate(operand.fallback, item) : value;
    }
    case 'arithmetic': {
      const left = evaluate(operand.left, item);
      const right = evaluate(operand.right, item);
      if (typeof left !== 'number' || typeof right !== 'number') {
        throw new UnsupportedExpressionError('an operand used in an update expression is not a number');
      }
      return operand.op === '+' ? left + right : left - right;
    }
  }
}

function compare(left: unknown, right: unknown): number | undefined {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return undefined;
}

function equal(left: unknown, right: unknown): boolean {
  if (left === undefined || right === undefined) return false;
  return JSON.stringify(left) === JSON.stringify(right);
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
    return (item) => {
      const s = evaluate(subject, item);
      const p = evaluate(prefix, item);
      return typeof s === 'string' && typeof p === 'string' && s.startsWith(p);
    };
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
    return (item) => options.some((option) => equal(evaluate(left, item), evaluate(option, item)));
  }
  if (parser.isWord('BETWEEN')) {
    parser.next();
    const low = parser.operand();
    if (!parser.isWord('AND')) throw new UnsupportedExpressionError('BETWEEN needs AND');
    parser.next();
    const high = parser.operand();
    return (item) => {
      const value = evaluate(left, item);
      const a = compare(value, evaluate(low, item));
      const b = compare(value, evaluate(high, item));
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
  if (operator.text === '=') return (item) => equal(evaluate(left, item), evaluate(right, item));
  if (operator.text === '<>') {
    return (item) => {
      const l = evaluate(left, item);
      return l !== undefined && !equal(l, evaluate(right, item));
    };
  }
  const test = comparisons[operator.text];
  if (!test) throw new UnsupportedExpressionError(`unsupported operator "${operator.text}"`);
  return (item) => {
    const c = compare(evaluate(left, item), evaluate(right, item));
    return c !== undefined && test(c);
  };
}

/** Compiles a condition (or key condition) expression into a predicate over an item. */
export function compileCondition(expression: string, context: ExpressionContext): (item: Item) => boolean {
  const parser = new Parser(expression, context);
  const predicate = parseOr(parser);
  if (!parser.done) throw new UnsupportedExpressionError(`unexpected "${parser.peek()?.text}" in condition`);
  return predicate;
}

/** Applies an update expression to a copy of `item` and returns the copy. */
export function applyUpdate(item: Item, expression: string, context: ExpressionContext): Item {
  const parser = new Parser(expression, context);
  const assignments: { path: Path; value: Operand }[] = [];
  const removals: Path[] = [];
  while (!parser.done) {
    const clause = parser.next().text.toUpperCase();
    if (clause !== 'SET' && clause !== 'REMOVE') {
      throw new UnsupportedExpressionError(`unsupported update clause "${clause}"`);
    }
    do {
      if (parser.isSymbol(',')) parser.next();
      const path = parser.path();
      if (clause === 'SET') {
        parser.expectSymbol('=');
        assignments.push({ path, value: parser.updateValue() });
      } else removals.push(path);
    } while (parser.isSymbol(','));
  }
  const updated = structuredClone(item);
  // DynamoDB evaluates every right-hand side against the item as it was before the update.
  const values = assignments.map(({ value }) => evaluate(value, item));
  for (const [index, { path }] of assignments.entries()) setPath(updated, path, values[index]);
  for (const path of removals) setPath(updated, path, undefined);
  return updated;
}

function setPath(item: Item, path: Path, value: unknown): void {
  let container: Record<string | number, unknown> = item;
  for (const step of path.slice(0, -1)) {
    const next = container[step];
    if (next === null || typeof next !== 'object')
      throw new UnsupportedExpressionError('path does not exist');
    container = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (value === undefined) delete container[last];
  else container[last] = value;
}
