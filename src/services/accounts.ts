import type { Config } from "../config.js";
import { newSecret, newSigningKey, newUuid } from "../domain/ids.js";
import type { PlanName } from "../domain/plans.js";
import { accountNotActive, AppError } from "../errors.js";
import type { Account, AccountPatch } from "../domain/records.js";
import type { Store, TokenCheck } from "../store/store.js";

/**
 * Tokens look like the hosted service's: base64 of `{"UserID": id, "Password": password}` (docs/messaging.md "Wire
 * conventions").
 */
export function makeToken(id: string, password: string): string {
  return Buffer.from(JSON.stringify({ UserID: id, Password: password })).toString("base64");
}

/** The first customer's e-mail when FERRY_ADMIN_EMAIL is not set. */
export const DEFAULT_ADMIN_EMAIL = "admin@ferry.local";

/** A fresh, active messaging account with new credentials and signing keys. */
export function newAccount(p: {
  customerId: string;
  plan: PlanName;
  region: string;
  now: number;
  token?: string | undefined;
  currentSigningKey?: string | undefined;
  nextSigningKey?: string | undefined;
}): Account {
  const id = newUuid();
  const password = newSecret();
  return {
    id,
    customerId: p.customerId,
    token: p.token ?? makeToken(id, password),
    // Same form as the token, with a password of its own that is never shown (the hosted service's
    // `read_only_password` is internal too).
    readOnlyToken: makeToken(id, newSecret()),
    password,
    currentSigningKey: p.currentSigningKey ?? newSigningKey(),
    nextSigningKey: p.nextSigningKey ?? newSigningKey(),
    plan: p.plan,
    state: "active",
    active: true,
    createdAt: p.now,
    lastPlanUpgradeTime: 0,
    reservedPrice: 0,
    prodPackEnabled: false,
    prometheusEnabled: false,
    region: p.region,
    budget: 0,
    createdBy: p.customerId,
  };
}

/**
 * Resolves a messaging token to its account; inactive accounts are refused with a clear message. `checkedAtCommit`:
 * the caller's write checks the token again (Store.accountGetByToken), so a cached answer will do.
 */
export async function authenticate(store: Store, token: string | undefined, checkedAtCommit = false): Promise<Account> {
  if (token === undefined || token === "")
    throw new AppError("unauthorized", "missing token: send Authorization: Bearer <token>");
  const account = await store.accountGetByToken({ token, checkedAtCommit });
  if (!account) throw new AppError("unauthorized", "invalid token");
  if (!account.active || account.state !== "active") {
    throw accountNotActive(account.state);
  }
  return account;
}

/** Reads the token again (never from the cache): still the account's token, and the account still active. */
export async function confirmToken(store: Store, check: TokenCheck): Promise<void> {
  const account = await authenticate(store, check.token);
  if (account.id !== check.accountId || account.token !== check.token) {
    throw new AppError("unauthorized", "invalid token");
  }
}

export interface BootstrapResult {
  account: Account;
  /** Secrets generated on this start, to print once. */
  generated: {
    token?: string;
    readOnlyToken?: string;
    currentSigningKey?: string;
    nextSigningKey?: string;
    /** The first customer's management credentials (see services/customers.ts). */
    adminEmail?: string;
    adminApiKey?: string;
  };
  /** Stored credentials the environment replaced on this start, by variable name (printed: src/cli/start-banner.ts). */
  replaced: ("FERRY_TOKEN" | "FERRY_CURRENT_SIGNING_KEY" | "FERRY_NEXT_SIGNING_KEY" | "FERRY_ADMIN_EMAIL" | "FERRY_ADMIN_API_KEY")[];
}

/**
 * Makes sure the default messaging account exists. On a first start without FERRY_TOKEN / signing keys they are
 * generated and stored; configured values always win over stored ones.
 */
export async function ensureDefaultAccount(config: Config, store: Store, now: number): Promise<BootstrapResult> {
  const existing = await store.accountFirst();
  const generated: BootstrapResult["generated"] = {};
  if (!existing) {
    // Owned by the first customer, which services/customers.ts creates right after under this e-mail.
    const customerId = config.adminEmail ?? (await store.customerFirst())?.email ?? DEFAULT_ADMIN_EMAIL;
    const account = newAccount({
      customerId,
      plan: config.defaultPlan,
      region: config.region,
      now,
      token: config.token,
      currentSigningKey: config.currentSigningKey,
      nextSigningKey: config.nextSigningKey,
    });
    // The read-only token is printed next to a generated token; with a configured one, the management API shows it.
    if (!config.token) {
      generated.token = account.token;
      if (account.readOnlyToken !== undefined) generated.readOnlyToken = account.readOnlyToken;
    }
    if (!config.currentSigningKey) generated.currentSigningKey = account.currentSigningKey;
    if (!config.nextSigningKey) generated.nextSigningKey = account.nextSigningKey;
    if (await store.accountInsertDefault({ account })) return { account, generated, replaced: [] };
    // Several nodes starting together on one empty database: another one created it first; use that one.
    return ensureDefaultAccount(config, store, now);
  }
  const patch: AccountPatch = {};
  if (config.token && config.token !== existing.token) patch.token = config.token;
  if (config.currentSigningKey && config.currentSigningKey !== existing.currentSigningKey) {
    patch.currentSigningKey = config.currentSigningKey;
  }
  if (config.nextSigningKey && config.nextSigningKey !== existing.nextSigningKey) {
    patch.nextSigningKey = config.nextSigningKey;
  }
  const account = Object.keys(patch).length > 0 ? await store.accountUpdate({ id: existing.id, patch }) : existing;
  const replaced: BootstrapResult["replaced"] = [];
  if (patch.token) replaced.push("FERRY_TOKEN");
  if (patch.currentSigningKey) replaced.push("FERRY_CURRENT_SIGNING_KEY");
  if (patch.nextSigningKey) replaced.push("FERRY_NEXT_SIGNING_KEY");
  return { account, generated, replaced };
}
