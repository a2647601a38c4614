import { invalidField } from "../errors.js";

/** Milliseconds to wait before the next retry; `retried` is 0 before the first retry. */
export type RetryDelayFn = (retried: number) => number;

const MAX_LENGTH = 1000;
const MAX_DELAY_MS = 86_400_000;

type Node =
  | { kind: "num"; value: number }
  | { kind: "retried" }
  | { kind: "neg"; arg: Node }
  | { kind: "bin"; op: string; left: Node; right: Node }
  | { kind: "call"; fn: Fn; args: Node[] };

interface Fn {
  min: number;
  max: number;
  apply: (...xs: number[]) => number;
}

// A Map, not an object literal, so names like `toString` or `constructor` do not resolve through the prototype.
const FUNCTIONS = new Map<string, Fn>([
  ["pow", { min: 2, max: 2, apply: Math.pow }],
  ["sqrt", { min: 1, max: 1, apply: Math.sqrt }],
  ["abs", { min: 1, max: 1, apply: Math.abs }],
  ["exp", { min: 1, max: 1, apply: Math.exp }],
  ["floor", { min: 1, max: 1, apply: Math.floor }],
  ["ceil", { min: 1, max: 1, apply: Math.ceil }],
  ["round", { min: 1, max: 1, apply: Math.round }],
  ["min", { min: 2, max: Number.POSITIVE_INFINITY, apply: Math.min }],
  ["max", { min: 2, max: Number.POSITIVE_INFINITY, apply: Math.max }],
]);

interface Token {
  text: string;
  pos: number;
}

const TOKEN = /\s*(?:(\d+(?:\.\d*)?|\.\d+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/%(),]))/y;

function tokenize(source: string, fail: (problem: string) => never): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (match === null) {
      const rest = source.slice(start).trimStart();
      if (rest === "") break; // trailing whitespace
      fail(`unexpected character "${rest[0]}" at position ${source.length - rest.length + 1}`);
    }
    const text = match[1] ?? match[2] ?? match[3] ?? "";
    tokens.push({ text, pos: TOKEN.lastIndex - text.length + 1 });
  }
  return tokens;
}

/** Recursive descent over: expr := term (+|- term)*; term := unary (*|/|% unary)*; unary := -unary | primary. */
function parse(source: string, fail: (problem: string) => never): Node {
  const tokens = tokenize(source, fail);
  let i = 0;
  const peek = (): string | undefined => tokens[i]?.text;
  const unexpected = (): never => {
    const token = tokens[i];
    return token === undefined
      ? fail("unexpected end of expression")
      : fail(`unexpected "${token.text}" at position ${token.pos}`);
  };
  const expect = (text: string): void => {
    if (peek() !== text) unexpected();
    i++;
  };

  const expr = (): Node => {
    let left = term();
    for (let op = peek(); op === "+" || op === "-"; op = peek()) {
      i++;
      left = { kind: "bin", op, left, right: term() };
    }
    return left;
  };
  const term = (): Node => {
    let left = unary();
    for (let op = peek(); op === "*" || op === "/" || op === "%"; op = peek()) {
      i++;
      left = { kind: "bin", op, left, right: unary() };
    }
    return left;
  };
  const unary = (): Node => {
    if (peek() === "-") {
      i++;
      return { kind: "neg", arg: unary() };
    }
    if (peek() === "+") {
      i++;
      return unary();
    }
    return primary();
  };
  const primary = (): Node => {
    const token = tokens[i];
    if (token === undefined) return unexpected();
    if (token.text === "(") {
      i++;
      const inner = expr();
      expect(")");
      return inner;
    }
    if (/^[\d.]/.test(token.text)) {
      i++;
      return { kind: "num", value: Number(token.text) };
    }
    if (!/^[A-Za-z_]/.test(token.text)) return unexpected();
    i++;
    if (peek() !== "(") {
      if (token.text === "retried") return { kind: "retried" };
      return fail(`unknown identifier "${token.text}" at position ${token.pos} (only "retried" is defined)`);
    }
    const fn = FUNCTIONS.get(token.text);
    if (fn === undefined) return fail(`unknown function "${token.text}" at position ${token.pos}`);
    i++;
    const args: Node[] = [];
    if (peek() !== ")") {
      args.push(expr());
      while (peek() === ",") {
        i++;
        args.push(expr());
      }
    }
    expect(")");
    if (args.length < fn.min || args.length > fn.max) {
      const wanted = fn.min === fn.max ? `${fn.min}` : `at least ${fn.min}`;
      fail(`${token.text}() takes ${wanted} argument(s), got ${args.length}`);
    }
    return { kind: "call", fn, args };
  };

  const root = expr();
  if (i < tokens.length) unexpected();
  return root;
}

function evaluate(node: Node, retried: number): number {
  switch (node.kind) {
    case "num":
      return node.value;
    case "retried":
      return retried;
    case "neg":
      return -evaluate(node.arg, retried);
    case "call":
      return node.fn.apply(...node.args.map((arg) => evaluate(arg, retried)));
    case "bin": {
      const a = evaluate(node.left, retried);
      const b = evaluate(node.right, retried);
      if (node.op === "+") return a + b;
      if (node.op === "-") return a - b;
      if (node.op === "*") return a * b;
      if (node.op === "/") return a / b;
      return a % b;
    }
  }
}

/** Compiles `Svc-Retry-Delay` once at publish time, so bad expressions are a 400 rather than a failed retry later. */
export function compileRetryDelay(expression: string, field: string): RetryDelayFn {
  const fail = (problem: string): never => {
    throw invalidField(field, problem);
  };
  if (expression.length > MAX_LENGTH) fail(`expression is longer than ${MAX_LENGTH} characters`);
  if (expression.trim() === "") fail("expression is empty");
  const ast = parse(expression, fail);

  for (let retried = 0; retried <= 3; retried++) {
    const value = evaluate(ast, retried);
    if (!Number.isFinite(value)) fail(`expression gives ${value} for retried=${retried}`);
  }

  return (retried) => {
    const value = evaluate(ast, retried);
    if (Number.isNaN(value)) return 0;
    return Math.round(Math.min(MAX_DELAY_MS, Math.max(0, value)));
  };
}
