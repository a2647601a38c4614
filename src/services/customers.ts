import type { Config } from "../config.js";
import type { PlanName } from "../domain/plans.js";
import { AppError, invalidField, quoted } from "../errors.js";
import type { Account, Customer } from "../domain/records.js";
import type { Store } from "../store/store.js";
import { type BootstrapResult, DEFAULT_ADMIN_EMAIL, ensureDefaultAccount, newAccount } from "./accounts.js";
import { decoyHash, hashApiKey, newApiKey, verifyApiKey } from "./credentials.js";

const EMAIL = /^[^\s:@]+@[^\s:@]+$/;

/**
 * First start: the default messaging account, then the first customer owning it, from FERRY_ADMIN_EMAIL /
 * FERRY_ADMIN_API_KEY or generated (the key is returned once, to print). Later starts apply configured values,
 * which always win over stored ones: a new FERRY_ADMIN_EMAIL renames the first customer, a new key replaces its hash.
 */
export async function bootstrap(config: Config, store: Store, now: number): Promise<BootstrapResult> {
  const result = await ensureDefaultAccount(config, store, now);
  const first = await store.customerFirst();
  if (!first) {
    const email = config.adminEmail ?? DEFAULT_ADMIN_EMAIL;
    const apiKey = config.adminApiKey ?? newApiKey();
    const inserted = await store.customerInsert({
      customer: { email, apiKeyHash: await hashApiKey(apiKey), createdAt: now },
    });
    // An install from before customers existed has a default account owned by "default": hand it over.
    if (result.account.customerId !== email) {
      result.account = await store.accountUpdate({ id: result.account.id, patch: { customerId: email } });
    }
    if (inserted && config.adminApiKey === undefined) {
      result.generated.adminEmail = email;
      result.generated.adminApiKey = apiKey;
    }
    return result;
  }
  const patch: { email?: string; apiKeyHash?: string } = {};
  if (config.adminEmail !== undefined && config.adminEmail !== first.email) {
    if (await store.customerGet({ email: config.adminEmail })) {
      throw new Error(`config error: FERRY_ADMIN_EMAIL ${config.adminEmail} already belongs to another customer`);
    }
    patch.email = config.adminEmail;
  }
  if (config.adminApiKey !== undefined && !(await verifyApiKey(config.adminApiKey, first.apiKeyHash))) {
    patch.apiKeyHash = await hashApiKey(config.adminApiKey);
  }
  if (patch.email !== undefined) result.replaced.push("FERRY_ADMIN_EMAIL");
  if (patch.apiKeyHash !== undefined) result.replaced.push("FERRY_ADMIN_API_KEY");
  if (Object.keys(patch).length > 0) {
    await store.customerUpdate({ email: first.email, patch });
    if (patch.email !== undefined)
      result.account = (await store.accountGet({ id: result.account.id })) ?? result.account;
  }
  return result;
}

export interface CreatedCustomer {
  customer: Customer;
  /** Shown once; only its hash is stored. */
  apiKey: string;
  account: Account;
}

/** Creates a customer with a generated API key and its own messaging account (the `ferry customers create` CLI). */
export async function createCustomer(
  config: Config,
  store: Store,
  p: { email: string; plan: PlanName; enterpriseId?: string; now: number },
): Promise<CreatedCustomer> {
  if (!EMAIL.test(p.email)) throw invalidField("email", `${quoted(p.email)} is not an e-mail address`);
  const apiKey = newApiKey();
  const customer: Customer = { email: p.email, apiKeyHash: await hashApiKey(apiKey), createdAt: p.now };
  const account = newAccount({ customerId: p.email, plan: p.plan, region: config.region, now: p.now });
  if (p.enterpriseId !== undefined) account.enterpriseId = p.enterpriseId;
  if (!(await store.customerInsert({ customer, account }))) {
    throw invalidField("email", `a customer with e-mail ${quoted(p.email)} already exists`);
  }
  return { customer, apiKey, account };
}

const unauthorized = (message: string) =>
  new AppError("unauthorized", message, { "WWW-Authenticate": 'Basic realm="ferry", charset="UTF-8"' });

/** Parses `Authorization: Basic base64(email:api_key)` and checks the key against its stored hash. */
export async function authenticateCustomer(store: Store, authorization: string | undefined): Promise<Customer> {
  const match = authorization === undefined ? null : /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization.trim());
  if (!match) throw unauthorized("missing credentials: send Authorization: Basic base64(email:api_key)");
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw unauthorized("invalid credentials: the Basic value must be base64(email:api_key)");
  const email = decoded.slice(0, colon);
  const key = decoded.slice(colon + 1);
  const customer = await store.customerGet({ email });
  // An unknown e-mail costs the same scrypt as a wrong key.
  const ok = await verifyApiKey(key, customer?.apiKeyHash ?? (await decoyHash()));
  if (!customer || !ok) throw unauthorized("invalid credentials");
  return customer;
}
