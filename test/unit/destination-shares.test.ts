import { describe, expect, it } from "vitest";
import { DestinationLoad } from "../../src/delivery/destination-load.js";
import { ClaimDestinations, destinationOf } from "../../src/domain/destination.js";

/** A destination's share of a node (docs/reliability.md "Isolation"): what the dispatcher counts, what the claim does. */
const H = "http://127.0.0.1:4000";
const O = "http://127.0.0.1:5000";

describe("DestinationLoad", () => {
  it("counts attempts per origin, tells the claim, and asks for a refill once as it drains past the mark", () => {
    let refills = 0;
    const load = new DestinationLoad(4, 3, () => refills++);
    for (let i = 0; i < 4; i++) load.add(`${H}/p${i}`);
    load.add("HTTP://127.0.0.1:4000/other-form");
    load.add(`${O}/x`);
    expect(load.full()).toEqual([H]);
    expect(load.shares()).toEqual({ share: 4, inUse: [[H, 5], [O, 1]] });
    expect(load.shares(2).share).toBe(2);
    load.remove(`${H}/p0`); // 4
    load.remove(`${H}/p1`); // 3: the mark
    load.remove(`${H}/p2`); // 2
    expect(refills).toBe(1);
    expect(load.full()).toEqual([]);
    load.remove(`${H}/p3`);
    load.remove("HTTP://127.0.0.1:4000/other-form");
    expect(load.shares().inUse).toEqual([[O, 1]]);
  });
});

describe("ClaimDestinations", () => {
  it("skips full destinations by key, gives each its room once, and leaves odd forms to be left alone by id", () => {
    const c = new ClaimDestinations({ share: 2, inUse: [[H, 2], [O, 1]] });
    expect(c.skipKeys).toEqual([H]);
    expect(c.hasRoom(`${H}/a`)).toBe(false);
    expect(c.isSkipped(`${H}/a`)).toBe(true);
    expect(c.hasRoom(`${O}/a`)).toBe(true);
    c.take(`${O}/a`);
    expect(c.hasRoom(`${O}/b`)).toBe(false);
    expect(c.skipKeys).toEqual([H, O]);
    const odd = "http://user@127.0.0.1:6000/x";
    expect(destinationOf(odd)).toBe("http://127.0.0.1:6000");
    c.take(odd);
    c.take(odd);
    expect(c.hasRoom(odd)).toBe(false);
    expect(c.isSkipped(odd)).toBe(false);
    expect(c.skipKeys).toEqual([H, O]);
  });

  it("without shares, every row has room and nothing is skipped", () => {
    const c = new ClaimDestinations(undefined);
    expect(c.hasRoom(`${H}/a`)).toBe(true);
    expect(c.skipKeys).toEqual([]);
  });
});
