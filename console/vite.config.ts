import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The hosted pages' one home (stylesheet, strings, helpers): bundled from its sources. */
const hostedPages = fileURLToPath(new URL('../packages/hosted-pages/', import.meta.url));

// Served by the gateway at /console (gateway/src/routes/console.ts); in development the gateway
// proxies /console to this dev server (CONSOLE_DEV_URL), so the API is same-origin either way.
// Two entries: the console (index.html) and GraphiQL (graphiql.html, served at /graphiql with
// GRAPHQL_IDE=true), and the hosted email-action pages (reset-password.html, verify-email.html, served
// at /reset-password and /verify-email), and the account page (account.html, at /account); they share the hashed assets/ folder, and the console loads
// none of GraphiQL.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  resolve: {
    alias: [
      { find: '@iam/hosted-pages/styles.css', replacement: `${hostedPages}styles.css` },
      { find: /^@iam\/hosted-pages\/browser$/, replacement: `${hostedPages}src/browser/index.ts` },
      { find: /^@iam\/hosted-pages$/, replacement: `${hostedPages}src/index.ts` },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    assetsDir: 'assets',
    // Emitted as files, never data: URIs (the favicon among them: served by the gateway with its type).
    assetsInlineLimit: 0,
    // GraphiQL's Monaco editor is one 2.8 MB chunk (loaded on /graphiql only); the console's own
    // budget (250 KB gzipped) is checked by test/bundle.test.ts.
    chunkSizeWarningLimit: 3_000,
    rollupOptions: {
      input: { index: 'index.html', graphiql: 'graphiql.html', 'reset-password': 'reset-password.html', 'verify-email': 'verify-email.html', account: 'account.html' },
      onwarn(warning, warn) {
        // @graphiql/react marks modules "use no memo" (a React Compiler hint); bundling drops it harmlessly.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { port: 5173, strictPort: true },
});
