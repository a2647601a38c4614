import type { WireError } from "../../../threads/wire.js";

/*
 * What the write relay's nodes say to each other (docs/postgres.md "The write relay"), frame by frame (frames.ts).
 * A follower's first frame is its hello (frames.ts, the secret it read from `relay_leader`); then each frame is the
 * calls of one event-loop turn, and each answer frame the answers the leader finished in one turn.
 */

/** The store methods a follower hands to the leader: a plain publish and a plain delivery's outcome. */
export type RelayedMethod = "messageInsertMany" | "messageFinish";

export type RelayCall = [id: number, method: RelayedMethod, params: unknown];

export type RelayAnswer = [id: number, ok: true, value: unknown] | [id: number, ok: false, error: WireError];
