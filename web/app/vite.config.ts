import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, defaultClientConditions } from 'vite';

// The page `qilin serve` serves at `/`, built into app/dist, which the Rust build embeds.
// `npm run dev:app` serves it with the API proxied to a running `qilin serve`
// (QILIN_SERVER=http://127.0.0.1:PORT).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  // The workspace's packages from their TypeScript source, not their build (`qilin-source`).
  resolve: { conditions: ['qilin-source', ...defaultClientConditions] },
  server: {
    fs: { allow: ['..'] },
    proxy: process.env.QILIN_SERVER === undefined ? {} : { '/api': process.env.QILIN_SERVER },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
});
