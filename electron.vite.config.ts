import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

// One config for the three processes. Native modules stay external (better-sqlite3's Electron build is in .native/).
export default defineConfig({
  main: {
    build: {
      rollupOptions: {
        input: {
          index: resolve(import.meta.dirname, 'main/electron/index.ts'),
          // Issue 34: the local model's worker, started as a utility process (main/electron/localModelProcess.ts).
          localModelWorker: resolve(import.meta.dirname, 'main/providers/local/worker.ts'),
        },
        external: ['better-sqlite3', 'node-pty', 'node-llama-cpp', 'koffi'],
      },
    },
  },
  preload: {
    build: {
      // A sandboxed preload can require only electron: bundle zod and the contract into it.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(import.meta.dirname, 'preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(import.meta.dirname, 'renderer'),
    build: {
      // Shipped to users (and served by keel serve): minified, no source maps.
      minify: true,
      rollupOptions: { input: { index: resolve(import.meta.dirname, 'renderer/index.html') } },
    },
    plugins: [react()],
  },
});
