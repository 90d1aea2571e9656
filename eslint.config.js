// Lint is where the layering rules of ARCHITECTURE.md are enforced: a wrong import fails here.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

const electronFree = ['electron', 'electron/*', '@electron/*'];

/*
 * The layering of ARCHITECTURE.md as a table: what each folder may import (imports only point down). A
 * violation fails `npm run lint` with the rule's reason. `common` is the leaf every layer shares.
 */
const LAYERS = {
  common: { pattern: 'main/common', may: [] },
  store: { pattern: 'main/store', may: ['common'] },
  providers: { pattern: 'main/providers', may: ['common'] },
  sandbox: { pattern: 'main/sandbox', may: ['common'] },
  runner: { pattern: 'main/runner', may: ['common', 'sandbox'] },
  tools: { pattern: 'main/tools', may: ['common', 'sandbox', 'runner'] },
  // MCP servers: their config, their boxed processes and clients, their tools as tool modules.
  mcp: { pattern: 'main/mcp', may: ['common', 'sandbox', 'runner', 'tools'] },
  // The core's front door: listed before `core`, whose folder holds it, so its files are its own.
  harness: {
    pattern: 'main/core/harness',
    may: ['common', 'core', 'store', 'providers', 'sandbox', 'tools', 'runner', 'mcp'],
  },
  core: { pattern: 'main/core', may: ['common', 'store', 'providers', 'sandbox', 'tools', 'runner', 'mcp'] },
  // ipc, cli, server and the shell are hosts: adapters over the core's front door. All they take from the
  // core, and from below it (store, providers, sandbox, tools, runner), comes through main/core/harness.
  ipc: { pattern: 'main/ipc', may: ['common', 'harness'] },
  server: { pattern: 'main/server', may: ['common', 'harness', 'ipc'] },
  // `keel acp`: the Agent Client Protocol agent for editors (issue 33), a host like ipc.
  acp: { pattern: 'main/acp', may: ['common', 'harness'] },
  cli: { pattern: 'main/cli', may: ['common', 'harness', 'ipc', 'server', 'acp'] },
  electron: { pattern: 'main/electron', may: ['common', 'harness', 'ipc', 'server'] },
  preload: { pattern: 'preload', may: [] },
  renderer: { pattern: 'renderer', may: [] },
};
/** The rules ARCHITECTURE.md states as "never", each with its reason. */
const NEVER = [
  {
    from: ['core', 'harness'],
    to: ['electron', 'ipc', 'server', 'cli', 'acp'],
    message:
      'main/core is the harness every host uses: it never imports a host (electron, ipc, server, cli).',
  },
  {
    from: ['ipc', 'cli', 'server', 'electron', 'acp'],
    to: ['core', 'store', 'providers', 'sandbox', 'tools', 'runner', 'mcp'],
    message:
      "A host goes through the core's front door: import main/core/harness (its index.ts), never a room of the core or what lies below it.",
  },
  {
    from: ['core'],
    to: ['harness'],
    message:
      'main/core/harness is the front door over the core: no other core folder imports it (move the shared piece down into the room that owns it).',
  },
  {
    from: ['tools', 'sandbox', 'runner', 'store', 'providers', 'mcp'],
    to: ['core', 'harness', 'ipc', 'server', 'cli', 'electron', 'acp'],
    message:
      'The parts the harness uses never import the harness or a host: share vocabulary through main/common.',
  },
  {
    from: ['common'],
    to: [
      'store',
      'providers',
      'sandbox',
      'runner',
      'tools',
      'mcp',
      'core',
      'harness',
      'ipc',
      'server',
      'cli',
      'electron',
      'acp',
    ],
    message: 'main/common is the leaf: it imports nothing from main/ but itself.',
  },
  {
    from: ['renderer', 'preload'],
    to: [
      'common',
      'store',
      'providers',
      'sandbox',
      'runner',
      'tools',
      'mcp',
      'core',
      'harness',
      'ipc',
      'server',
      'cli',
      'electron',
      'acp',
    ],
    message: 'The renderer is untrusted: it imports only the IPC contract (main/ipc/contract.ts) from main/.',
  },
];
const typesOf = (names) => ({ element: { types: { anyOf: names } } });

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
      // The small user projects of the trajectory suite and keel eval: their code, not Keel's.
      'evals/projects/',
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
    // A file does one job: none in main/, renderer/ or preload/ grows past 600 lines (split it by job).
    files: ['main/**/*.ts', 'renderer/**/*.ts', 'renderer/**/*.tsx', 'preload/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 600 }] },
  },
  {
    // Layering: each folder imports only the folders its row of LAYERS names (tests and scripts are free).
    files: ['main/**/*.ts', 'renderer/**/*.ts', 'renderer/**/*.tsx', 'preload/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': {
        typescript: { project: ['tsconfig.node.json', 'tsconfig.web.json'], noWarnOnMultipleProjects: true },
      },
      'boundaries/elements': Object.entries(LAYERS).map(([type, layer]) => ({
        type,
        pattern: layer.pattern,
      })),
      // The contract is the one file of main/ipc the renderer and the preload may import.
      'boundaries/files': [
        { category: 'contract', pattern: 'main/ipc/contract.ts' },
        // keel/core, the library entry: it exports the front door as it is.
        { category: 'library', pattern: 'main/core/index.ts' },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          message: 'imports only point down: see LAYERS in eslint.config.js for what this folder may import',
          policies: [
            ...Object.entries(LAYERS).map(([type, layer]) => ({
              from: { element: { type } },
              allow: { to: typesOf(layer.may) },
            })),
            ...NEVER.map((never) => ({
              from: typesOf(never.from),
              disallow: { to: typesOf(never.to) },
              message: never.message,
            })),
            // Last, so no never above overrides them: the library entry exports the front door, and the
            // renderer and the preload may import the contract.
            {
              from: { file: { categories: { anyOf: ['library'] } } },
              allow: { to: typesOf(['harness']) },
            },
            {
              from: typesOf(['renderer', 'preload']),
              allow: { to: { file: { categories: { anyOf: ['contract'] } } } },
            },
          ],
        },
      ],
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
      'main/mcp/**',
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
