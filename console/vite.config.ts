import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The console's build (docs/console.md): Preact through Vite's own JSX transform, every asset emitted under
 * /console/assets/ with a content hash, no inline script (Ferry's Content-Security-Policy forbids it).
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  resolve: { alias: { react: "preact/compat", "react-dom": "preact/compat" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The module-preload polyfill would be an inline script: modern browsers need none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  logLevel: "warn",
});
