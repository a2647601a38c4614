import { quoted } from "../errors.js";

/**
 * Deepest nesting of arrays and objects a JSON body may have (docs/reliability.md "Hostile bodies"). No body Ferry
 * reads needs more than a few levels; 64 leaves search documents room. Deeper input is refused before it is parsed, so
 * no later step (validation, JSON.stringify, the searchable text) recurses as deep as the input asks.
 */
export const MAX_JSON_DEPTH = 64;

/** Path components a too-deep message names before it elides the rest. */
const SHOWN = 4;

/** What a body's shape breaks, found before it is parsed. */
export type ShapeProblem = { kind: "depth"; path: string } | { kind: "items"; max: number };

/**
 * The first shape limit `text` breaks: an array or object nested deeper than `maxDepth` (with its path, e.g.
 * `body[0].content.t[0]…`), or a top-level array of more than `maxItems` elements. One pass over the characters with
 * explicit stacks: no recursion, whatever the input's depth, and it stops at the first element past the limit. The
 * text need not be valid JSON (the parser decides that afterwards); only strings, brackets and commas are followed.
 */
export function shapeProblem(
  text: string,
  limits: { maxDepth?: number; maxItems?: number } = {},
): ShapeProblem | undefined {
  const max = limits.maxDepth ?? MAX_JSON_DEPTH;
  const maxItems = limits.maxItems ?? Infinity;
  // Per open container: object or array, whether the next string is a member name, the current member's name
  // (as offsets into `text`), the current array index.
  const isObject: boolean[] = [];
  const expectKey: boolean[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const index: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i++;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      const top = depth - 1;
      if (top >= 0 && isObject[top] && expectKey[top]) {
        keyStart[top] = start;
        keyEnd[top] = i;
        expectKey[top] = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth >= max) return { kind: "depth", path: pathOf(text, depth, isObject, keyStart, keyEnd, index) };
      isObject[depth] = c === 0x7b;
      expectKey[depth] = c === 0x7b;
      keyStart[depth] = -1;
      keyEnd[depth] = -1;
      index[depth] = 0;
      depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--;
    } else if (c === 0x2c /* , */ && depth > 0) {
      if (isObject[depth - 1]) expectKey[depth - 1] = true;
      // Index n is the (n+1)th element: at the top level, one past maxItems is enough to refuse.
      else if (++index[depth - 1]! >= maxItems && depth === 1) return { kind: "items", max: maxItems };
    }
  }
  return undefined;
}

/** A member name as a path step: `.name` when plain and short, else `[<quoted name>]`. */
function step(name: string, first: boolean): string {
  if (/^[A-Za-z0-9_$-]{1,64}$/.test(name)) return first ? name : `.${name}`;
  return `${first ? "body" : ""}[${quoted(name)}]`;
}

function pathOf(
  text: string,
  depth: number,
  isObject: boolean[],
  keyStart: number[],
  keyEnd: number[],
  index: number[],
): string {
  let path = depth > 0 && isObject[0] ? "" : "body";
  const shown = Math.min(depth, SHOWN);
  for (let level = 0; level < shown; level++) {
    if (!isObject[level]) {
      path += `[${index[level]}]`;
      continue;
    }
    let name = "";
    try {
      name = String(JSON.parse(text.slice(keyStart[level], keyEnd[level]! + 1)));
    } catch {
      name = text.slice(keyStart[level]! + 1, keyEnd[level]);
    }
    path += step(name, path === "");
  }
  return depth > shown ? `${path}…` : path || "body";
}
