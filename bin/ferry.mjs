#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npx ferry …` works in a checkout without a build step.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
