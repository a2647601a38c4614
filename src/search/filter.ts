import { AppError, quoted } from "../errors.js";

/**
 * The SQL-like filter grammar of a search index (docs/search.md "Filters"), parsed into a tree that each store
 * translates to parameterised SQL. Values never reach SQL text: only the tree's shape does.
 *
 *   expr    := and ("OR" and)*
 *   and     := primary ("AND" primary)*
 *   primary := "(" expr ")" | "HAS" ["NOT"] "FIELD" field | field op
 *   op      := ("=" | "!=" | "<" | "<=" | ">" | ">=") value | ["NOT"] "GLOB" string
 *            | ["NOT"] "IN" "(" value ("," value)* ")" | ["NOT"] "CONTAINS" value
 */

/** One step of a field path: an object key, an array index, or an index from the end (`[#-1]` is the last). */
export type PathStep = { key: string } | { index: number } | { fromEnd: number };

export interface FieldPath {
  /** `content` fields are bare names; `metadata` fields start with `@metadata.`. */
  source: "content" | "metadata";
  steps: PathStep[];
}

export type FilterValue = string | number | boolean;
export type CompareOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

export type FilterNode =
  | { kind: "and"; children: FilterNode[] }
  | { kind: "or"; children: FilterNode[] }
  | { kind: "compare"; op: CompareOp; field: FieldPath; value: FilterValue }
  | { kind: "glob"; negate: boolean; field: FieldPath; pattern: string }
  | { kind: "in"; negate: boolean; field: FieldPath; values: FilterValue[] }
  | { kind: "contains"; negate: boolean; field: FieldPath; value: FilterValue }
  | { kind: "hasField"; negate: boolean; field: FieldPath };

type Token =
  | { type: "ident"; text: string; pos: number }
  | { type: "string"; value: string; pos: number }
  | { type: "number"; value: number; pos: number }
  | { type: "op"; text: string; pos: number }
  | { type: "punct"; text: "(" | ")" | ","; pos: number }
  | { type: "end"; pos: number };

/** Deepest nesting of parentheses in a filter (docs/search.md "Filters"; like a JSON body's 64 levels). */
export const MAX_FILTER_DEPTH = 64;

/** 400 of the form the contract fixes: `invalid filter: <what is wrong> at position <n>` (0-based). */
function filterError(problem: string, pos: number): AppError {
  return new AppError("invalid_input", `invalid filter: ${problem} at position ${pos}`);
}

const IDENT_START = /[a-zA-Z_@]/;
const IDENT_PART = /[a-zA-Z_0-9.[\]#@-]/;

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "(" || c === ")" || c === ",") {
      tokens.push({ type: "punct", text: c, pos: i });
      i++;
    } else if (c === "'" || c === '"') {
      const start = i;
      let value = "";
      i++;
      for (;;) {
        if (i >= input.length) throw filterError("unterminated string", start);
        const d = input[i]!;
        if (d === "\\" && i + 1 < input.length) {
          value += input[i + 1];
          i += 2;
        } else if (d === c) {
          // A doubled quote inside the string is one quote, as in SQL.
          if (input[i + 1] === c) {
            value += c;
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          value += d;
          i++;
        }
      }
      tokens.push({ type: "string", value, pos: start });
    } else if (/[0-9]/.test(c) || ((c === "-" || c === "+" || c === ".") && /[0-9.]/.test(input[i + 1] ?? ""))) {
      const match = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(input.slice(i))!;
      tokens.push({ type: "number", value: Number(match[0]), pos: i });
      i += match[0].length;
    } else if ("=!<>".includes(c)) {
      const two = input.slice(i, i + 2);
      const text = ["!=", "<=", ">=", "<>"].includes(two) ? two : c;
      if (text === "!") throw filterError(`unexpected "!"`, i);
      tokens.push({ type: "op", text: text === "<>" ? "!=" : text, pos: i });
      i += text.length;
    } else if (IDENT_START.test(c)) {
      const start = i;
      while (i < input.length && IDENT_PART.test(input[i]!)) i++;
      tokens.push({ type: "ident", text: input.slice(start, i), pos: start });
    } else {
      throw filterError(`unexpected character ${quoted(c)}`, i);
    }
  }
  tokens.push({ type: "end", pos: input.length });
  return tokens;
}

const METADATA_PREFIX = "@metadata.";

/** `a.b[0].c[#-1]` into steps; the position is the identifier's, for errors. */
export function parseFieldPath(text: string, pos: number): FieldPath {
  let source: FieldPath["source"] = "content";
  let rest = text;
  if (rest.startsWith(METADATA_PREFIX)) {
    source = "metadata";
    rest = rest.slice(METADATA_PREFIX.length);
  } else if (rest.startsWith("@")) {
    throw filterError(`unknown field ${quoted(text)} (metadata fields start with "@metadata.")`, pos);
  }
  const steps: PathStep[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\[#(?:-(\d+))?\]|(\.)/gy;
  let expectKey = true;
  let at = 0;
  while (at < rest.length) {
    re.lastIndex = at;
    const m = re.exec(rest);
    if (!m) throw filterError(`malformed field ${quoted(text)}`, pos + (text.length - rest.length) + at);
    if (m[1] !== undefined) {
      if (!expectKey) throw filterError(`malformed field ${quoted(text)}`, pos);
      if (m[1].includes("@") || m[1].includes("#")) throw filterError(`malformed field ${quoted(text)}`, pos);
      steps.push({ key: m[1] });
      expectKey = false;
    } else if (m[2] !== undefined) {
      if (steps.length === 0) throw filterError(`malformed field ${quoted(text)}`, pos);
      steps.push({ index: Number(m[2]) });
    } else if (m[0].startsWith("[#")) {
      if (steps.length === 0) throw filterError(`malformed field ${quoted(text)}`, pos);
      steps.push({ fromEnd: m[3] === undefined ? 0 : Number(m[3]) });
    } else {
      if (expectKey) throw filterError(`malformed field ${quoted(text)}`, pos);
      expectKey = true;
    }
    at = re.lastIndex;
  }
  if (steps.length === 0 || expectKey) throw filterError(`malformed field ${quoted(text)}`, pos);
  return { source, steps };
}

class Parser {
  private at = 0;
  /** Parentheses open now: bounded, so the descent (and the SQL built from the tree) never recurses as deep as the input asks. */
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.at]!;
  }

  private next(): Token {
    return this.tokens[this.at++]!;
  }

  private isKeyword(word: string, token = this.peek()): boolean {
    return token.type === "ident" && token.text.toUpperCase() === word;
  }

  private expectKeyword(word: string): void {
    const t = this.next();
    if (!this.isKeyword(word, t)) throw filterError(`expected ${word} but found ${describe(t)}`, t.pos);
  }

  parse(): FilterNode {
    const node = this.or();
    const t = this.peek();
    if (t.type !== "end") throw filterError(`unexpected ${describe(t)}`, t.pos);
    return node;
  }

  private or(): FilterNode {
    const children = [this.and()];
    while (this.isKeyword("OR")) {
      this.next();
      children.push(this.and());
    }
    return children.length === 1 ? children[0]! : { kind: "or", children };
  }

  private and(): FilterNode {
    const children = [this.primary()];
    while (this.isKeyword("AND")) {
      this.next();
      children.push(this.primary());
    }
    return children.length === 1 ? children[0]! : { kind: "and", children };
  }

  private primary(): FilterNode {
    const t = this.next();
    if (t.type === "punct" && t.text === "(") {
      if (++this.depth > MAX_FILTER_DEPTH) {
        throw filterError(`parentheses nested deeper than ${MAX_FILTER_DEPTH} levels`, t.pos);
      }
      const inner = this.or();
      this.depth--;
      const close = this.next();
      if (!(close.type === "punct" && close.text === ")")) {
        throw filterError(`expected ")" but found ${describe(close)}`, close.pos);
      }
      return inner;
    }
    if (t.type !== "ident") throw filterError(`expected a field but found ${describe(t)}`, t.pos);
    if (t.text.toUpperCase() === "HAS") {
      let negate = false;
      if (this.isKeyword("NOT")) {
        this.next();
        negate = true;
      }
      this.expectKeyword("FIELD");
      const f = this.next();
      if (f.type !== "ident") throw filterError(`expected a field but found ${describe(f)}`, f.pos);
      return { kind: "hasField", negate, field: parseFieldPath(f.text, f.pos) };
    }
    const field = parseFieldPath(t.text, t.pos);
    return this.operation(field);
  }

  private operation(field: FieldPath): FilterNode {
    const t = this.next();
    if (t.type === "op") return { kind: "compare", op: t.text as CompareOp, field, value: this.value() };
    let negate = false;
    let word: Token = t;
    if (this.isKeyword("NOT", t)) {
      negate = true;
      word = this.next();
    }
    const keyword = word.type === "ident" ? word.text.toUpperCase() : "";
    if (keyword === "GLOB") {
      const p = this.next();
      if (p.type !== "string") throw filterError(`GLOB needs a quoted pattern but found ${describe(p)}`, p.pos);
      return { kind: "glob", negate, field, pattern: p.value };
    }
    if (keyword === "IN") {
      const open = this.next();
      if (!(open.type === "punct" && open.text === "(")) {
        throw filterError(`expected "(" after IN but found ${describe(open)}`, open.pos);
      }
      const values = [this.value()];
      for (;;) {
        const sep = this.next();
        if (sep.type === "punct" && sep.text === ")") break;
        if (!(sep.type === "punct" && sep.text === ",")) {
          throw filterError(`expected "," or ")" but found ${describe(sep)}`, sep.pos);
        }
        values.push(this.value());
      }
      return { kind: "in", negate, field, values };
    }
    if (keyword === "CONTAINS") return { kind: "contains", negate, field, value: this.value() };
    throw filterError(`expected an operator but found ${describe(word)}`, word.pos);
  }

  private value(): FilterValue {
    const t = this.next();
    if (t.type === "string" || t.type === "number") return t.value;
    if (this.isKeyword("TRUE", t)) return true;
    if (this.isKeyword("FALSE", t)) return false;
    throw filterError(`expected a value but found ${describe(t)}`, t.pos);
  }
}

function describe(t: Token): string {
  switch (t.type) {
    case "end":
      return "the end of the filter";
    case "string":
      return `string ${quoted(t.value)}`;
    case "number":
      return `number ${t.value}`;
    default:
      return quoted(t.text);
  }
}

/** Parses a filter string; undefined for an empty one. Throws a 400 naming the position on malformed input. */
export function parseFilter(input: string): FilterNode | undefined {
  if (input.trim() === "") return undefined;
  return new Parser(tokenize(input)).parse();
}

/** A case-sensitive UNIX glob (`*`, `?`, `[..]`, `[^..]`, `[!..]`) as an anchored POSIX regular expression. */
export function globToRegex(glob: string): string {
  let out = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith("!")) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else out += c.replace(/[.+(){}|^$\\]/g, "\\$&");
  }
  return `${out}$`;
}
