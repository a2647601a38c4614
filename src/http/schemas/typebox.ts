/**
 * The one module that loads TypeBox's runtime (the schemas' `Type` builders); everything else imports its types
 * only. TypeBox ships as about 370 small ES modules, and every ES module the server loads stays in memory as a module
 * record with its source and compiled code (measured: ~10 MiB more live heap at start, which bench P4's peak RSS
 * multiplies by the old generation's growth). So `npm run build` replaces this file's compiled output with one
 * bundle of it (scripts/build-server.mjs, `BUNDLED`): the compiled server loads TypeBox as one module, while from
 * source (tsx, the tests) it is the package's own graph. docs/architecture.md "Wire shapes".
 */
export { type Static, type TSchema, Type } from "typebox";
