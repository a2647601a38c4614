import { newSecret } from "../domain/ids.js";
import type { PlanName } from "../domain/plans.js";
import { notFound } from "../errors.js";
import type { Account, Customer } from "../domain/records.js";
import { makeToken } from "./accounts.js";
import type { Services } from "./context.js";

/** Messaging-account use cases of the management API. A customer only ever reaches its own accounts. */

/** 404 for an unknown id and for another customer's account alike, so ids of others cannot be probed. */
export async function ownedAccount(services: Services, customer: Customer, id: string): Promise<Account> {
  const account = await services.store.accountGet({ id });
  if (!account || account.customerId !== customer.email) throw notFound(`messaging account ${id}`);
  return account;
}

/** The customer's first account: what the legacy paths without an id (`GET …/user`) act on. */
export async function defaultAccountOf(services: Services, customer: Customer): Promise<Account> {
  const [account] = await services.store.accountListByCustomer({ customerId: customer.email });
  if (!account) throw notFound(`messaging account of ${customer.email}`);
  return account;
}

export function listAccounts(services: Services, customer: Customer): Promise<Account[]> {
  return services.store.accountListByCustomer({ customerId: customer.email });
}

/**
 * New password, token and read-only token. Messaging auth reads the account by token on every request, so the old
 * tokens are refused from the commit on, on every node; messages already accepted are delivered (they are signed
 * with the signing keys, which do not change here).
 */
export function rotateToken(services: Services, account: Account): Promise<Account> {
  const password = newSecret();
  return services.store.accountUpdate({
    id: account.id,
    patch: { password, token: makeToken(account.id, password), readOnlyToken: makeToken(account.id, newSecret()) },
  });
}

export function setPlan(services: Services, account: Account, plan: PlanName): Promise<Account> {
  return services.store.accountUpdate({
    id: account.id,
    patch: { plan, lastPlanUpgradeTime: Math.floor(services.clock.now() / 1000) },
  });
}

/** Monthly budget in dollars, under the rule of src/domain/budget.ts (the body parser refuses any other). */
export function setBudget(services: Services, account: Account, budget: number): Promise<Account> {
  return services.store.accountUpdate({ id: account.id, patch: { budget } });
}

export function setProdPack(services: Services, account: Account, enabled: boolean): Promise<Account> {
  return services.store.accountUpdate({ id: account.id, patch: { prodPackEnabled: enabled } });
}
