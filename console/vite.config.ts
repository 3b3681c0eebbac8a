import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the gateway at /console (gateway/src/routes/console.ts); in development the gateway
// proxies /console to this dev server (CONSOLE_DEV_URL), so the API is same-origin either way.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, assetsDir: 'assets' },
  server: { port: 5173, strictPort: true },
});
