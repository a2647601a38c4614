// Entry of the store thread when Ferry runs from its TypeScript source (npm start with tsx, vitest): a worker does
// not inherit the loader of its parent, and `--import tsx` in a worker's execArgv does not register it on Node 20,
// so the .ts entry is loaded through tsx's API. Compiled builds (dist/) start worker.js directly.
import { workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

await tsImport(workerData.entry, import.meta.url);
