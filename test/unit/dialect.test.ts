import { describe, expect, it } from "vitest";
import { chooseDialect, dialectsFor, inDialect, type NamePlace } from "../../src/domain/dialect.js";
import { AppError } from "../../src/errors.js";

/** How a request's names decide its dialect (docs/messaging.md "Dialects"). */
const dialects = dialectsFor("neutral", "1.0.0");
const choose = (...names: [NamePlace, string][]) => chooseDialect(dialects, names);
const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(400);
    return (error as AppError).message;
  }
  throw new Error("not refused");
};

describe("chooseDialect", () => {
  it("is the default, decided by nothing, when the request uses neither dialect's names", () => {
    const choice = choose(
      ["path", "/v2/publish/https://x/v2/qstash/"],
      ["header", "content-type"],
      ["query parameter", "a"],
    );
    expect(choice.dialect.name).toBe("neutral");
    expect(choice.decidedBy).toBeUndefined();
    expect(chooseDialect(dialectsFor("upstash", "1.0.0"), []).dialect.name).toBe("upstash");
  });

  it("is decided by the first header, query key, token parameter or management path of a dialect", () => {
    expect(choose(["header", "upstash-delay"])).toMatchObject({ decidedBy: "header Upstash-Delay" });
    expect(choose(["header", "upstash-delay"]).dialect.name).toBe("upstash");
    expect(choose(["query parameter", "qstash_token"]).dialect.name).toBe("upstash");
    expect(choose(["query parameter", "Upstash-Retries"]).dialect.name).toBe("upstash");
    expect(choose(["path", "/V2/QSTASH/user"]).dialect.name).toBe("upstash");
    expect(choose(["path", "/v2/qstashy"]).decidedBy).toBeUndefined();
    expect(choose(["path", "/v2/msgsvc/users"], ["header", "svc-x"]).dialect.name).toBe("neutral");
  });

  it("refuses a request that mixes them, naming both names", () => {
    expect(refusal(() => choose(["header", "upstash-delay"], ["header", "svc-retries"]))).toBe(
      'invalid header Svc-Retries: mixes two dialects: this request also uses header Upstash-Delay; use either the ' +
        'Upstash-… or the Svc-… names (docs/messaging.md "Dialects")',
    );
    expect(refusal(() => choose(["query parameter", "svc_token"], ["query parameter", "qstash_token"]))).toMatch(
      /^invalid query parameter qstash_token: .*query parameter svc_token/,
    );
    // A key with blanks or quotes is quoted, so the message still shows where its name ends.
    expect(refusal(() => choose(["header", "svc-a"], ["query parameter", 'upstash- "x']))).toMatch(
      /^invalid query parameter "upstash- \\"x": /,
    );
  });

  it("continues an earlier decision (a batch's items after its request)", () => {
    const request = choose(["header", "upstash-telemetry-sdk"]);
    expect(chooseDialect(dialects, [["header", "upstash-retries"]], request).dialect.name).toBe("upstash");
    expect(refusal(() => chooseDialect(dialects, [["header", "svc-retries"]], request))).toMatch(
      /^invalid header Svc-Retries: .*header Upstash-Telemetry-Sdk/,
    );
    const undecided = choose();
    expect(chooseDialect(dialects, [["header", "upstash-retries"]], undecided).dialect.name).toBe("upstash");
  });
});

describe("dialectsFor and inDialect", () => {
  it("names a record's dialect, the default for a record stored without one", () => {
    const upstashDefault = dialectsFor("upstash", "1.0.0");
    expect(upstashDefault.of(undefined).name).toBe("upstash");
    expect(upstashDefault.of("neutral").name).toBe("neutral");
    expect(upstashDefault.all.map((d) => d.name)).toEqual(["upstash", "neutral"]);
  });

  it("spells a configuration header of either dialect in another, and leaves other names alone", () => {
    const upstash = dialects.of("upstash");
    expect(inDialect(dialects, "svc-forward-x-a", upstash)).toBe("upstash-forward-x-a");
    expect(inDialect(dialects, "upstash-retries", upstash)).toBe("upstash-retries");
    expect(inDialect(dialects, "upstash-retries", dialects.of("neutral"))).toBe("svc-retries");
    expect(inDialect(dialects, "x-svc-a", upstash)).toBe("x-svc-a");
  });
});
