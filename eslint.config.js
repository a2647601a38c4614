// Lint: ESLint with typescript-eslint's recommended rules. (Biome was dropped: its platform binaries are optional
// packages the registry here cannot resolve for other platforms, which made `npm ci` refuse the lock file.)
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "bench/results/**", "data/**", "dist/**", ".dist-build-*/**", "console/dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // `!` is used where noUncheckedIndexedAccess cannot see an invariant the code just checked.
      "@typescript-eslint/no-non-null-assertion": "off",
      eqeqeq: ["error", "always"],
      "no-console": "error",
    },
  },
  {
    // The console runs in the browser (docs/console.md).
    files: ["console/src/**"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["test/**", "bench/**"],
    rules: { "no-console": "off" },
  },
);
