import { type Static, Type } from "./common.js";

/** `GET /v2/keys` and `POST /v2/keys/rotate` (docs/messaging.md "Signing keys"). */
export const SigningKeys = Type.Object({
  current: Type.String({ description: "The key deliveries are signed with now" }),
  next: Type.String({ description: "The key that becomes current at the next rotation" }),
});
export type SigningKeys = Static<typeof SigningKeys>;
