import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, defaultClientConditions } from 'vite';

// The gallery (index.html) and the benchmark page (bench.html), built into gallery/dist.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [react()],
  // The workspace's packages from their TypeScript source, not their build (`qilin-source`).
  resolve: { conditions: ['qilin-source', ...defaultClientConditions] },
  server: { fs: { allow: ['..'] } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2048,
    rollupOptions: {
      input: {
        gallery: fileURLToPath(new URL('index.html', import.meta.url)),
        bench: fileURLToPath(new URL('bench.html', import.meta.url)),
      },
    },
  },
});
