import { type Static, Type } from "./common.js";

/** One published message (docs/messaging.md "Publish"): `deduplicated` only when it was a duplicate. */
export const Published = Type.Object({
  messageId: Type.String(),
  url: Type.String({ description: "The endpoint's URL" }),
  deduplicated: Type.Optional(
    Type.Boolean({ description: "True when a message with the same deduplication id was published before" }),
  ),
});
export type Published = Static<typeof Published>;

/** `POST /v2/publish/*` and `POST /v2/enqueue/*`: one object for a URL, an array (one per endpoint) for a URL group. */
export const PublishAnswer = Type.Union([Published, Type.Array(Published)], {
  description: "One object for a URL destination, an array (one per endpoint) for a URL group",
});
export type PublishAnswer = Static<typeof PublishAnswer>;

/** A batch item that was refused while the others were sent (docs/batch.md). */
export const BatchItemRefused = Type.Object({ error: Type.String({ description: "Why, naming the field" }) });

/** `POST /v2/batch` (docs/batch.md): one answer per item, in request order. */
export const BatchAnswer = Type.Array(Type.Union([Published, Type.Array(Published), BatchItemRefused]), {
  description: "Per item: an object for a URL, an array for a URL group, {error} for a refused item",
});
export type BatchAnswer = Static<typeof BatchAnswer>;
