import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS, timerDelay } from "../../src/domain/timers.js";

const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The text of every `setTimeout(…)` / `setInterval(…)` call in `text`, up to its closing parenthesis. */
function timerCalls(text: string): string[] {
  const calls: string[] = [];
  for (const match of text.matchAll(/\bset(?:Timeout|Interval)\(/g)) {
    let depth = 0;
    let end = match.index;
    for (let i = match.index + match[0].length - 1; i < text.length; i++) {
      if (text[i] === "(") depth++;
      else if (text[i] === ")" && --depth === 0) {
        end = i + 1;
        break;
      }
    }
    calls.push(text.slice(match.index, end));
  }
  return calls;
}

describe("timers (docs/reliability.md, \"Timers\")", () => {
  it("timerDelay clamps to 0..2^31-1 ms", () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(timerDelay(351_789_047_273)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
    expect(timerDelay(MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    expect(timerDelay(1500)).toBe(1500);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(Number.NaN)).toBe(0);
  });

  it("every setTimeout and setInterval in src/ passes its delay through timerDelay", () => {
    const unclamped = sourceFiles(SRC).flatMap((file) =>
      timerCalls(readFileSync(file, "utf8"))
        .filter((call) => !call.includes("timerDelay("))
        .map((call) => `${relative(SRC, file)}: ${call.split("\n")[0]}`),
    );
    expect(unclamped).toEqual([]);
  });
});
