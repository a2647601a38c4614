/** One figure a scenario measured. `key` (e.g. `p1.delivered`) is what ratios and goals refer to. */
export interface Measurement {
  key: string;
  scenario: string;
  metric: string;
  value: number | undefined;
  unit: string;
  /** Short context printed beside the figure (counts, CPU per message …). */
  detail?: string;
  /** Set instead of a value when the scenario could not run; the run still completes. */
  skipped?: string;
}

export interface BenchContext {
  quick: boolean;
  /** Run CPU profiles where a scenario offers one (full runs by default). */
  profile: boolean;
  /** Scratch directory of this run (data files, child logs, profiles); removed at the end unless --keep. */
  workDir: string;
  log(message: string): void;
  record(m: Measurement): void;
  /** A figure recorded earlier in this run. */
  value(key: string): number | undefined;
  /** A free-form section added to the results file (profiles, configuration notes). */
  section(title: string, body: string): void;
  /** Registers a cleanup that runs even when the scenario throws (stop children by pid, remove files). */
  defer(cleanup: () => Promise<unknown> | unknown): void;
}

export interface Scenario {
  id: string;
  title: string;
  /** Scenarios whose figures this one's ratios use; `npm run bench -- p1` runs them too, first. */
  needs?: string[];
  /** Runs only when named (`npm run bench -- sustained`), not in the default run: it takes long. */
  optIn?: boolean;
  run(ctx: BenchContext): Promise<void>;
}

/** Measurement rounds per figure (the median is kept): 3 in full runs, 1 in quick ones. */
export const rounds = (ctx: Pick<BenchContext, "quick">): number => (ctx.quick ? 1 : 3);

/** Count by mode: quick runs only check the harness. */
export const pick = (ctx: Pick<BenchContext, "quick">, full: number, quick: number): number =>
  ctx.quick ? quick : full;
