// Entry of a worker thread when Ferry runs from its TypeScript source (npm start with tsx, vitest): loads the
// thread's worker.ts, named by workerData.entry, through tsx's API (src/threads/worker-entry.ts says why).
import { workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

await tsImport(workerData.entry, import.meta.url);
