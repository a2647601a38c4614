import { newSigningKey } from "../domain/ids.js";
import type { Account } from "../domain/records.js";
import type { Services } from "./context.js";

/** The account's two signing keys, as `GET /v2/keys` shows them. */
export interface SigningKeys {
  current: string;
  next: string;
}

export const signingKeysOf = (account: Account): SigningKeys => ({
  current: account.currentSigningKey,
  next: account.nextSigningKey,
});

/**
 * Rotation: the next key becomes the current one and a fresh next key is made, in one store write. Receivers verify
 * with both keys, so deliveries signed before and after the rotation both pass (docs/messaging.md "Signing keys").
 */
export async function rotateSigningKeys(services: Services, account: Account): Promise<SigningKeys> {
  return signingKeysOf(await services.store.accountRotateKeys({ id: account.id, next: newSigningKey() }));
}
