import { type Judged, judge } from "./goals.js";
import type { Measurement } from "./scenario.js";
import { formatNumber } from "./stats.js";

export interface Row {
  m: Measurement;
  j: Judged;
}

export function judgeAll(measurements: Measurement[]): Row[] {
  const values = (key: string) => measurements.find((m) => m.key === key)?.value;
  return measurements.map((m) => ({ m, j: judge(m, values) }));
}

const HEADER = ["Scenario", "Figure", "Value", "Unit", "Ratio (same run)", "Goal", "Met", "Detail"];

function cells(r: Row): string[] {
  const { m, j } = r;
  const value = m.skipped !== undefined ? "skipped" : formatNumber(m.value);
  const ratio = j.ratio !== undefined ? `${j.ratio.toFixed(2)}${j.ratioLabel ?? ""}` : "";
  const met = j.met === undefined ? "" : j.met ? "yes" : j.floorMet ? "floor" : "NO";
  const detail = m.skipped !== undefined ? m.skipped : (m.detail ?? "");
  return [m.scenario, m.metric, value, m.unit, ratio, j.goal ?? "", met, detail];
}

/** The one table, as aligned plain text for the terminal. */
export function textTable(rows: Row[]): string {
  const all = [HEADER, ...rows.map(cells)];
  const widths = HEADER.map((_, c) => Math.min(70, Math.max(...all.map((r) => r[c]!.length))));
  const line = (r: string[]) =>
    r
      .map((cell, c) => {
        const text = cell.length > 70 ? `${cell.slice(0, 67)}...` : cell;
        return c === 2 || c === 4 ? text.padStart(widths[c]!) : text.padEnd(widths[c]!);
      })
      .join("  ")
      .trimEnd();
  return [line(HEADER), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map((r) => line(cells(r)))].join("\n");
}

/** The same table as Markdown, for the results file. */
export function markdownTable(rows: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    `| ${HEADER.join(" | ")} |`,
    `|${HEADER.map((_, c) => (c === 2 || c === 4 ? "---:" : "---")).join("|")}|`,
    ...rows.map((r) => `| ${cells(r).map(esc).join(" | ")} |`),
  ].join("\n");
}
