import type { AttemptResponse } from "../../domain/message.js";
import type { SendParams } from "../http-client.js";

/** What crosses between the main thread and the egress thread: the sends of one turn together, answers likewise. */
export type ToEgressThread = { sends: [id: number, params: SendParams][] } | { close: true };
export type FromEgressThread = { answers: [id: number, response: AttemptResponse][] } | { closed: true };
