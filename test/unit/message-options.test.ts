import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ConfigHeaders, METHODS } from "../../src/domain/config-values.js";
import { dialectFor } from "../../src/domain/dialect.js";
import type { MessageSpec } from "../../src/domain/message.js";
import {
  MESSAGE_OPTIONS,
  optionDetails,
  optionLogFields,
  optionRecordFields,
} from "../../src/domain/message-options.js";
import { parsePublishConfig } from "../../src/domain/publish-config.js";
import { specToConfigHeaders } from "../../src/domain/spec-headers.js";

/*
 * The message-option table (src/domain/message-options.ts) is the one place an option is described. These tests fail
 * when a MessageSpec field has no descriptor, when a descriptor's parse and its reverse disagree, and when the
 * records and the logs show an option differently.
 */

const limits = { max_retries: 20, max_delay: 86_400 };
const SERVICE_SET = "set by the services, never by a header";

const name = fc.stringMatching(/^x-[a-z0-9]{1,8}$/);
const value = fc.stringMatching(/^[!-~]([ -~]{0,10}[!-~])?$/);
const headerValues = fc.array(value, { minLength: 1, maxLength: 2 });
const forwarded = (prefix: string) =>
  fc
    .dictionary(name, headerValues, { minKeys: 1, maxKeys: 3 })
    .map((d) => Object.fromEntries(Object.entries(d).map(([n, v]) => [`${prefix}${n}`, v])));
const retryDelay = fc.constantFrom("1000", "pow(2, retried) * 1000", "1000 * retried");
const url = fc.stringMatching(/^[a-z0-9]{1,8}$/).map((path) => `http://127.0.0.1:9/${path}`);

/** One callback's headers (`callback` or `failure-callback`), every optional part sometimes. */
const callback = (key: string) => (p: string) =>
  fc
    .record(
      {
        url,
        method: fc.constantFrom(...METHODS),
        retries: fc.integer({ min: 0, max: 20 }),
        timeout: fc.integer({ min: 0, max: 1_000_000 }),
        retryDelay,
        headers: forwarded(`${p}${key}-forward-`),
      },
      { requiredKeys: ["url"] },
    )
    .map((c): ConfigHeaders => {
      const out: ConfigHeaders = { [`${p}${key}`]: c.url, ...c.headers };
      if (c.method !== undefined) out[`${p}${key}-method`] = c.method;
      if (c.retries !== undefined) out[`${p}${key}-retries`] = String(c.retries);
      if (c.timeout !== undefined) out[`${p}${key}-timeout`] = `${c.timeout}ms`;
      if (c.retryDelay !== undefined) out[`${p}${key}-retry-delay`] = c.retryDelay;
      return out;
    });

/**
 * The configuration headers of each MessageSpec field (prefix in, headers out). Typed by MessageSpec's keys: a new
 * field does not compile here until it is given headers (or marked as set by the services), and the tests below
 * then fail until the table describes it.
 */
const OPTION_HEADERS: { [K in keyof MessageSpec]-?: ((prefix: string) => fc.Arbitrary<ConfigHeaders>) | typeof SERVICE_SET } = {
  headers: (p) =>
    fc
      .tuple(forwarded(`${p}forward-`), fc.option(fc.constantFrom("application/json", "text/plain"), { nil: undefined }))
      .map(([h, type]) => (type === undefined ? h : { ...h, "content-type": type })),
  method: (p) => fc.constantFrom(...METHODS).map((m) => ({ [`${p}method`]: m.toLowerCase() })),
  retries: (p) => fc.integer({ min: 0, max: 20 }).map((n) => ({ [`${p}retries`]: String(n) })),
  retryDelayExpr: (p) => retryDelay.map((e) => ({ [`${p}retry-delay`]: e })),
  timeoutMs: (p) => fc.integer({ min: 1, max: 10_000_000 }).map((ms) => ({ [`${p}timeout`]: `${ms}ms` })),
  labels: (p) =>
    fc.array(fc.stringMatching(/^[a-z0-9_]{1,8}$/), { minLength: 1, maxLength: 3 }).map((l) => ({ [`${p}label`]: l.join(",") })),
  redact: (p) =>
    fc
      .record({ body: fc.boolean(), all: fc.boolean(), names: fc.uniqueArray(name, { maxLength: 2 }) })
      .map((r) => ({
        [`${p}redact-fields`]: [...(r.body ? ["body"] : []), ...(r.all ? ["header"] : []), ...r.names.map((n) => `header[${n}]`)].join(","),
      })),
  flowControl: (p) =>
    fc
      .record(
        {
          key: fc.stringMatching(/^[a-z0-9]{1,8}$/),
          parallelism: fc.integer({ min: 1, max: 100 }),
          rate: fc.integer({ min: 1, max: 100 }),
          period: fc.integer({ min: 1, max: 604_800 }),
        },
        { requiredKeys: ["key", "parallelism", "period"] },
      )
      .map((f) => ({
        [`${p}flow-control-key`]: f.key,
        [`${p}flow-control-value`]: `parallelism=${f.parallelism}${f.rate === undefined ? "" : `, rate=${f.rate}`}, period=${f.period}s`,
      })),
  callback: callback("callback"),
  failureCallback: callback("failure-callback"),
  dialect: SERVICE_SET,
  workflow: SERVICE_SET,
};

const SPEC_KEYS = Object.keys(OPTION_HEADERS) as (keyof MessageSpec)[];
const HEADER_KEYS = SPEC_KEYS.filter((k) => OPTION_HEADERS[k] !== SERVICE_SET);

/** Some of the options, each from its own headers. */
const someOptions = (prefix: string) =>
  fc.subarray(HEADER_KEYS).chain((keys) =>
    fc
      .tuple(...keys.map((k) => (OPTION_HEADERS[k] as (p: string) => fc.Arbitrary<ConfigHeaders>)(prefix)))
      .map((parts) => ({ keys, headers: Object.assign({}, ...parts) as ConfigHeaders })),
  );

describe("message options (src/domain/message-options.ts)", () => {
  it("describes every MessageSpec field, once", () => {
    const described = MESSAGE_OPTIONS.flatMap((o) => (o.spec === undefined ? [] : [o.spec]));
    expect([...described].sort()).toEqual([...SPEC_KEYS].sort());
    for (const option of MESSAGE_OPTIONS) {
      const serviceSet = option.spec !== undefined && OPTION_HEADERS[option.spec] === SERVICE_SET;
      // A header option is parsed; only those set by the services have no headers and no parse.
      expect(option.parse === undefined, `${option.spec ?? option.headers.join()}: parse`).toBe(serviceSet);
      expect(option.headers.length === 0, `${option.spec ?? option.headers.join()}: headers`).toBe(serviceSet);
      // What lives in the spec is written back (a DLQ retry parses it again); delay and deduplication are not.
      if (option.spec !== undefined && !serviceSet) expect(option.write, `${option.spec}: write`).toBeDefined();
    }
  });

  for (const dialectName of ["neutral", "upstash"] as const) {
    const dialect = dialectFor(dialectName, "test");
    const parse = (headers: ConfigHeaders) => parsePublishConfig({ headers, query: new Map() }, dialect, limits, 1_000_000);

    it(`parse → reverse → parse keeps every option (${dialect.prefix}…)`, () => {
      fc.assert(
        fc.property(someOptions(dialect.prefixLower), ({ keys, headers }) => {
          const first = parse(headers).spec;
          // Every option given was read into its field: an option the table forgot to parse fails here.
          for (const key of keys) expect(first[key], `${key} from ${JSON.stringify(headers)}`).toBeDefined();
          const again = parse(specToConfigHeaders(first, dialect.prefixLower)).spec;
          expect(again).toEqual(first);
        }),
        { numRuns: 100 },
      );
    });
  }

  it("the records and the logs show each option alike", () => {
    const dialect = dialectFor("neutral", "test");
    fc.assert(
      fc.property(someOptions("svc-"), ({ headers }) => {
        const spec = parsePublishConfig({ headers, query: new Map() }, dialect, limits, 1_000_000).spec;
        const record = optionRecordFields(spec);
        const source: Parameters<typeof optionLogFields>[0] = { details: optionDetails(spec) };
        if (spec.labels) source.labels = spec.labels;
        if (spec.flowControl) source.flowKey = spec.flowControl.key;
        const log = optionLogFields(source);
        expect(log.method).toBe(record.method);
        expect(log.maxRetries).toBe(record.maxRetries);
        expect(log.header).toEqual(record.header);
        expect(log.retryDelayExpression).toBe(record.retryDelayExpression);
        expect(log.timeout === undefined ? undefined : Math.floor(log.timeout / 1000)).toBe(record.timeout);
        expect(log.callback).toBe(record.callback);
        expect(log.callbackHeaders).toEqual(record.callbackHeader);
        expect(log.failureCallback).toBe(record.failureCallback);
        expect(log.failureCallbackHeaders).toEqual(record.failureCallbackHeader);
        expect([log.label, log.labels]).toEqual([record.label, record.labels]);
        expect([log.flowControlKey, log.parallelism, log.rate, log.period]).toEqual([
          record.flowControlKey,
          record.parallelism,
          record.rate,
          record.period,
        ]);
      }),
      { numRuns: 100 },
    );
  });

  it("an empty Redact-Fields survives a retry, so the retried message keeps its written-out log", () => {
    const dialect = dialectFor("neutral", "test");
    const parse = (headers: ConfigHeaders) => parsePublishConfig({ headers, query: new Map() }, dialect, limits, 0);
    const first = parse({ "svc-redact-fields": "" }).spec;
    expect(first.redact).toEqual({ body: false, allHeaders: false, headers: [] });
    expect(parse(specToConfigHeaders(first, "svc-")).spec).toEqual(first);
  });
});
