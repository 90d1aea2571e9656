// Lint is where the layering rules of ARCHITECTURE.md are enforced: a wrong import fails here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const electronFree = ['electron', 'electron/*', '@electron/*'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'out/',
      'dist/',
      'release/',
      '.native/',
      '.tsbuild/',
      'coverage/',
      'test-results/',
      '.bench-tmp/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['*.js', '*.mjs', 'scripts/*.mjs', '.ci/*.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // The harness runs under plain Node (CLI, server, tests): Electron stays out of it.
    files: [
      'main/core/**',
      'main/store/**',
      'main/providers/**',
      'main/sandbox/**',
      'main/tools/**',
      'main/runner/**',
      'main/cli/**',
      'main/server/**',
      'main/ipc/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: electronFree, message: 'Only main/electron may import Electron.' }] },
      ],
    },
  },
  {
    // SQL stays in the store: only main/store and the per-session log open SQLite.
    files: ['main/**'],
    ignores: ['main/store/**', 'main/core/log/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'better-sqlite3', message: 'SQL lives in main/store and main/core/log only.' }],
          patterns: [{ group: electronFree, message: 'Only main/electron may import Electron.' }],
        },
      ],
    },
  },
  {
    files: ['main/electron/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'better-sqlite3', message: 'SQL lives in main/store and main/core/log only.' }] },
      ],
    },
  },
  {
    // The renderer is untrusted: it knows the contract's types and window.keel, nothing else from main.
    files: ['renderer/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+main/(?!ipc/contract(\\.js)?$)',
              message: 'The renderer may import only main/ipc/contract (types) from main.',
            },
            { group: ['electron', 'node:*', 'better-sqlite3', 'node-pty'], message: 'Not in the renderer.' },
          ],
        },
      ],
    },
  },
  {
    files: ['preload/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+main/(?!ipc/contract(\\.js)?$)',
              message: 'The preload is one small file plus the contract.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
