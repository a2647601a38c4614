import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ManagementApi, MessagingApi } from "./api";
import type { Session } from "./session";
import type { AccountOverview, ServerConfig } from "./types";

export interface Toast {
  id: number;
  kind: "ok" | "error";
  text: string;
}

export interface AppContextValue {
  config: ServerConfig;
  session: Session;
  api: MessagingApi;
  /** Set after an e-mail sign-in: what rotates tokens and lists the customer's accounts. */
  management: ManagementApi | undefined;
  account: AccountOverview;
  /** The read-only token: every write button is disabled. */
  readOnly: boolean;
  refreshAccount: () => void;
  notify: (text: string, kind?: Toast["kind"]) => void;
  /** Replaces the messaging token (after a rotation). */
  setToken: (token: string) => void;
}

export const AppContext = createContext<AppContextValue | undefined>(undefined);

export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error("useApp outside the signed-in console");
  return value;
}
