/**
 * The publish parser's cost per publish (issue 30 item 1: the message-option table must not make the P1 hot path
 * dearer). Counted in instructions, which stay repeatable on a loaded machine (docs/threading.md "Levers of this
 * round"): run it under callgrind twice, with N iterations and with none, and divide the difference by N:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded --predictable-gc-schedule --import tsx bench/parse-config.ts 20000 plain
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded --predictable-gc-schedule --import tsx bench/parse-config.ts 0 plain
 *
 * Two requests: `plain` is what P1 sends (transport headers, no configuration), `configured` sets most options
 * (retries, delay, timeout, retry delay, labels, flow control, callbacks with forwarded headers, forwarded headers).
 * Without valgrind it prints the wall time per parse, which is only a hint under load (docs/threading.md).
 */
import { dialectFor } from "../src/domain/dialect.js";
import { type ConfigSource, parsePublishConfig } from "../src/domain/publish-config.js";

const dialect = dialectFor("neutral", "bench");
const limits = { max_retries: 5, max_delay: 7 * 24 * 3600 };
const transport = {
  host: "127.0.0.1:8080",
  "user-agent": "autocannon",
  "content-type": "application/json",
  "content-length": "1024",
  authorization: "Bearer token-of-the-bench",
  accept: "*/*",
  connection: "keep-alive",
};
const SOURCES: Record<string, ConfigSource> = {
  plain: { headers: transport, query: new Map() },
  configured: {
    headers: {
      ...transport,
      "svc-retries": "3",
      "svc-delay": "10s",
      "svc-timeout": "30s",
      "svc-retry-delay": "1000 * pow(2, retried)",
      "svc-method": "PUT",
      "svc-label": "billing",
      "svc-flow-control-key": "tenant-1",
      "svc-flow-control-value": "parallelism=5, rate=100, period=1m",
      "svc-callback": "https://example.com/cb",
      "svc-callback-forward-x-kind": "callback",
      "svc-failure-callback": "https://example.com/fail",
      "svc-forward-x-tenant": "t1",
      "svc-forward-x-request-id": "r-123",
    },
    query: new Map(),
  },
};

const iterations = Number(process.argv[2] ?? "20000");
const which = process.argv[3] ?? "plain";
const source = SOURCES[which];
if (source === undefined) throw new Error(`unknown request ${which}: plain or configured`);
// Warm-up, the same in both runs, so the difference is the loop alone.
for (let i = 0; i < 5000; i++) parsePublishConfig(source, dialect, limits, 1_700_000_000_000 + i);
const start = process.hrtime.bigint();
let sink = 0;
for (let i = 0; i < iterations; i++) sink += parsePublishConfig(source, dialect, limits, 1_700_000_000_000 + i).spec.retries;
const ns = Number(process.hrtime.bigint() - start);
if (iterations > 0) console.log(`${which}: ${(ns / iterations).toFixed(0)} ns per parse (wall, a hint only) ${sink > 0 ? "" : " "}`);
