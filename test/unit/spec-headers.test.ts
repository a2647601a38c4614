import { describe, expect, it } from "vitest";
import { parsePublishConfig } from "../../src/domain/publish-config.js";
import { specToConfigHeaders } from "../../src/domain/spec-headers.js";

const names = { prefix: "Svc-", prefixLower: "svc-" };
const limits = { max_retries: 20, max_delay: 86_400 };
const parse = (headers: Record<string, string | string[]>) =>
  parsePublishConfig({ headers, query: new Map() }, names, limits, 1_000_000);

describe("specToConfigHeaders", () => {
  it("round-trips every setting through parsePublishConfig", () => {
    const { spec } = parse({
      "content-type": "application/json",
      "svc-forward-x-a": ["1", "2, with comma"],
      "svc-method": "PATCH",
      "svc-retries": "5",
      "svc-retry-delay": "pow(2, retried) * 1000",
      "svc-timeout": "1500ms",
      "svc-label": "a,b",
      "svc-redact-fields": "body,header[X-A]",
      "svc-flow-control-key": "k",
      "svc-flow-control-value": "parallelism=2, rate=3, period=1m",
      "svc-callback": "http://127.0.0.1/cb",
      "svc-callback-method": "PUT",
      "svc-callback-retries": "1",
      "svc-callback-timeout": "2s",
      "svc-callback-retry-delay": "100",
      "svc-callback-forward-x-cb": "c",
      "svc-failure-callback": "http://127.0.0.1/fail",
      "svc-failure-callback-forward-x-f": "f",
    });
    expect(parse(specToConfigHeaders(spec, "svc-")).spec).toEqual(spec);
  });

  it("round-trips a minimal spec and one that redacts every header", () => {
    const cases: Record<string, string>[] = [{}, { "svc-redact-fields": "header", "svc-forward-x-b": "v" }];
    for (const headers of cases) {
      const { spec } = parse(headers);
      expect(parse(specToConfigHeaders(spec, "svc-")).spec).toEqual(spec);
    }
  });

  it("carries neither delay nor deduplication: a retry is a new message, due now", () => {
    const parsed = parse({ "svc-delay": "1h", "svc-deduplication-id": "d1" });
    const again = parse(specToConfigHeaders(parsed.spec, "svc-"));
    expect(again.delayMs).toBe(0);
    expect(again.dedupId).toBeUndefined();
  });

  it("uses the dialect's prefix", () => {
    const { spec } = parse({ "svc-retries": "2", "svc-forward-x-a": "1" });
    expect(specToConfigHeaders(spec, "upstash-")).toMatchObject({
      "upstash-retries": "2",
      "upstash-forward-x-a": ["1"],
    });
  });
});
