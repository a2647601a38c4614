// Entry of the egress thread when Ferry runs from its TypeScript source (npm start with tsx, vitest): a worker does
// not inherit its parent's loader on Node 20, so the .ts entry is loaded through tsx's API (as the store thread's,
// src/store/thread/source-entry.mjs). Compiled builds (dist/) start worker.js directly.
import { workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

await tsImport(workerData.entry, import.meta.url);
