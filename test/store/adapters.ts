import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";

/** Every adapter the conformance suite runs against; each call gives a fresh, empty database. */
export interface AdapterFactory {
  name: string;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

export const adapters: AdapterFactory[] = [
  {
    name: "sqlite",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "ferry-store-"));
      const store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "NORMAL" });
      await store.migrate();
      return {
        store,
        dispose: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
