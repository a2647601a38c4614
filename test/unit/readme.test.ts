import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startBanner } from "../../src/cli/start-banner.js";

/**
 * README.md as a new user reads it (issue 27): the two commands, what you need, the first start's printout as the
 * code prints it, and a troubleshooting section whose quoted messages are the ones Ferry really writes.
 */
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), "utf8");
const readme = read("README.md");
const section = (title: string) => {
  const start = readme.indexOf(`\n## ${title}\n`);
  expect(start, `README.md has a "## ${title}" section`).toBeGreaterThan(0);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
};

describe("README.md", () => {
  it("keeps the two commands", () => {
    expect(section("Quick start")).toContain("npm ci && npm start");
    expect(section("Quick start")).toMatch(/^npm test +#/m);
  });

  it("says what you need: Node and npm, nothing else", () => {
    const { engines } = JSON.parse(read("package.json")) as { engines: { node: string } };
    const need = section("What you need");
    expect(need).toContain(`Ferry runs on ${engines.node.replace(">=", "")} and later`);
    expect(need).toMatch(/Node\.js 20\.19 or later/);
    expect(need).toContain("and npm. Nothing else");
  });

  it("shows the first start's printout exactly as `ferry serve` prints it", () => {
    const { version } = JSON.parse(read("package.json")) as { version: string };
    const printed = startBanner({
      url: "http://127.0.0.1:8080",
      config: { host: "0.0.0.0", databaseUrl: "sqlite:./data/ferry.db", dialect: "neutral" },
      bootstrap: {
        generated: {
          token: "eyJVc2VySUQiOi...",
          readOnlyToken: "eyJVc2VySUQiOi...",
          currentSigningKey: "sig_...",
          nextSigningKey: "sig_...",
          adminEmail: "admin@ferry.local",
          adminApiKey: "key_...",
        },
        replaced: [],
      },
      version,
    });
    expect(section("Quick start")).toContain(`\`\`\`\n${printed.trimEnd()}\n\`\`\``);
  });

  it("has a troubleshooting section for the first three things a new user hits, quoting Ferry's own messages", () => {
    const t = section("Troubleshooting");
    expect(t.match(/^- \*\*/gm)).toHaveLength(3);
    expect(t).toContain("EADDRINUSE");
    const sources = [
      read("src/main.ts"),
      read("src/services/accounts.ts"),
      read("src/cli/start-banner.ts"),
      read("src/delivery/failure-lines.ts"),
    ].join("\n");
    expect(sources).toContain('"ferry failed to start"');
    expect(sources).toContain('"invalid token"');
    expect(sources).toContain('"replaced the messaging token stored in the database');
    expect(sources).toContain("attempt failed; retrying");
    expect(sources).toContain("failed; moved to the DLQ");
  });
});
