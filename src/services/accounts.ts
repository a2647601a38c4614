import type { Config } from "../config.js";
import { newSecret, newSigningKey, newUuid } from "../domain/ids.js";
import { isPlanName, type PlanLimits, plans } from "../domain/plans.js";
import { AppError } from "../errors.js";
import type { Account, Store } from "../store/store.js";

/** Tokens look like the hosted service's: base64 of `{"UserID": id, "Password": password}` (reference §0). */
export function makeToken(id: string, password: string): string {
  return Buffer.from(JSON.stringify({ UserID: id, Password: password })).toString("base64");
}

export function limitsOf(account: Pick<Account, "plan">): PlanLimits {
  return plans[account.plan] ?? plans.paid;
}

/** Resolves a messaging token to its account; inactive accounts are refused with a clear message. */
export async function authenticate(store: Store, token: string | undefined): Promise<Account> {
  if (token === undefined || token === "")
    throw new AppError("unauthorized", "missing token: send Authorization: Bearer <token>");
  const account = await store.accountGetByToken({ token });
  if (!account) throw new AppError("unauthorized", "invalid token");
  if (!account.active || account.state !== "active") {
    throw new AppError("forbidden", `account is not active (state: ${account.state})`);
  }
  return account;
}

export interface BootstrapResult {
  account: Account;
  /** Secrets generated on this start, to print once. */
  generated: { token?: string; currentSigningKey?: string; nextSigningKey?: string };
}

/**
 * Makes sure the default messaging account exists. On a first start without FERRY_TOKEN / signing keys they are
 * generated and stored; configured values always win over stored ones.
 */
export async function ensureDefaultAccount(config: Config, store: Store, now: number): Promise<BootstrapResult> {
  const existing = await store.accountFirst();
  const generated: BootstrapResult["generated"] = {};
  if (!existing) {
    const id = newUuid();
    const password = newSecret();
    const plan = isPlanName(config.defaultPlan) ? config.defaultPlan : "paid";
    const account: Account = {
      id,
      customerId: "default",
      token: config.token ?? makeToken(id, password),
      password,
      currentSigningKey: config.currentSigningKey ?? newSigningKey(),
      nextSigningKey: config.nextSigningKey ?? newSigningKey(),
      plan,
      state: "active",
      active: true,
      createdAt: now,
    };
    if (!config.token) generated.token = account.token;
    if (!config.currentSigningKey) generated.currentSigningKey = account.currentSigningKey;
    if (!config.nextSigningKey) generated.nextSigningKey = account.nextSigningKey;
    try {
      await store.accountInsert({ account });
      return { account, generated };
    } catch (error) {
      // Several nodes starting together on one empty database: another one created it first; use that one.
      const winner = await store.accountFirst();
      if (!winner) throw error;
      return ensureDefaultAccount(config, store, now);
    }
  }
  const patch: Parameters<Store["accountUpdate"]>[0]["patch"] = {};
  if (config.token && config.token !== existing.token) patch.token = config.token;
  if (config.currentSigningKey && config.currentSigningKey !== existing.currentSigningKey) {
    patch.currentSigningKey = config.currentSigningKey;
  }
  if (config.nextSigningKey && config.nextSigningKey !== existing.nextSigningKey) {
    patch.nextSigningKey = config.nextSigningKey;
  }
  const account = Object.keys(patch).length > 0 ? await store.accountUpdate({ id: existing.id, patch }) : existing;
  return { account, generated };
}
