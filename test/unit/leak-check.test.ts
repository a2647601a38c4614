import { describe, expect, it } from "vitest";
import { leftRunning } from "../helpers/leaks.js";
import { Receiver } from "../helpers/receiver.js";

describe("the leak check (test/helpers/leaks.ts)", () => {
  it("names what a test left running, and nothing once it is stopped", async () => {
    const stopped = await Receiver.start();
    await stopped.close();
    const forgotten = await Receiver.start();
    const url = forgotten.url();
    const left = leftRunning();
    await forgotten.close();
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(`receiver ${url}, started in "the leak check`);
    expect(leftRunning()).toEqual([]);
  });
});
