import { newMessageId } from "../../src/domain/ids.js";
import type { FlowControl, NewMessage } from "../../src/domain/message.js";
import type { Account } from "../../src/store/store.js";

/** Builders shared by the flow-control store tests (both adapters, and the PostgreSQL row-lock protocol). */
export const T0 = 1_700_000_000_000;

export function account(id: string, plan: Account["plan"]): Account {
  return {
    id,
    customerId: id,
    token: `token-${id}`,
    password: "p",
    currentSigningKey: "sig_current0000000000",
    nextSigningKey: "sig_next000000000000000",
    plan,
    state: "active",
    active: true,
    createdAt: T0,
  };
}

export function message(accountId: string, now: number, flowControl?: FlowControl): NewMessage {
  const m: NewMessage = {
    id: newMessageId(now),
    accountId,
    kind: "message",
    state: "CREATED",
    url: "http://127.0.0.1:9/x",
    body: undefined,
    spec: { method: "POST", headers: {}, retries: 0 },
    createdAt: now,
    notBefore: 0,
    dueAt: now,
    retried: 0,
  };
  if (flowControl) m.spec.flowControl = flowControl;
  return m;
}
