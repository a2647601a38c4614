/**
 * Start-up time: from spawning `ferry serve` to the first 200 from `GET /ready` (or `/health` on a build without
 * /ready), on a fresh SQLite file each round. `node --import tsx bench/startup.ts [--rounds=N] [--tsx]`:
 * `--tsx` runs the TypeScript sources through tsx (how `npm start` ran before the compiled build), otherwise the
 * compiled dist/main.js. Prints every round and the median. Traffic only to 127.0.0.1.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.split("=")[1] ?? 7);
const viaTsx = args.includes("--tsx");

async function ready(base: string): Promise<boolean> {
  for (const path of ["/ready", "/health"]) {
    try {
      const res = await request(`${base}${path}`);
      await res.body.text();
      if (res.statusCode === 200) return true;
      if (res.statusCode !== 404) return false;
    } catch {
      return false;
    }
  }
  return false;
}

async function once(port: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "ferry-startup-"));
  const command = viaTsx ? ["--import", "tsx", "src/main.ts", "serve"] : ["dist/main.js", "serve"];
  const started = performance.now();
  const child = spawn(process.execPath, command, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      FERRY_PORT: String(port),
      FERRY_HOST: "127.0.0.1",
      FERRY_LOG_LEVEL: "silent",
      DATABASE_URL: `sqlite:${join(dir, "ferry.db")}`,
      FERRY_TOKEN: "bench-token-0123456789",
    },
    stdio: "ignore",
  });
  try {
    // Bounded: 2,000 polls of 5 ms at most (10 s).
    for (let i = 0; i < 2000; i++) {
      if (await ready(`http://127.0.0.1:${port}`)) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error("ferry did not become ready in 10 s");
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const times: number[] = [];
for (let i = 0; i < rounds; i++) {
  const ms = await once(18_700 + i);
  times.push(ms);
  console.log(`round ${i + 1}: ${ms.toFixed(0)} ms`);
}
times.sort((a, b) => a - b);
console.log(`${viaTsx ? "tsx (sources)" : "compiled (dist/)"}: median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms over ${rounds} rounds`);
