import react from '@vitejs/plugin-react';
import { defaultClientConditions } from 'vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  // The workspace's packages from their TypeScript source, not their build (`qilin-source`).
  resolve: { conditions: ['qilin-source', ...defaultClientConditions] },
  test: {
    environment: 'jsdom',
    include: [
      'packages/*/src/**/*.test.{ts,tsx}',
      'gallery/src/**/*.test.{ts,tsx}',
      'app/src/**/*.test.{ts,tsx}',
    ],
    setupFiles: ['./vitest.setup.ts'],
    restoreMocks: true,
  },
});
