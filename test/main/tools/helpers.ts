import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import type { TextRedactor, ToolContext } from '../../../main/tools/types.js';

/** A temp tree: `root/ws` is the workspace (real path), `root/outside` is what must stay untouched. */
export interface TempWorkspace {
  root: string;
  workspace: string;
  outside: string;
  sessionDir: string;
  ctx(overrides?: Partial<ToolContext>): ToolContext;
  cleanup(): void;
}

/** The secret the test redactor hides; files and commands in tests print it to prove redaction. */
export const TEST_SECRET = 'sk-test-0123456789abcdefSECRET';

/** Replaces TEST_SECRET, as the sandbox redactor does for real secrets. */
export const testRedactor: TextRedactor = { redact: (text) => text.split(TEST_SECRET).join('[REDACTED]') };

/** A sandbox description for "no OS sandbox here". */
export const noSandbox: SandboxInfo = {
  kind: 'none',
  reason: 'test: no sandbox',
  version: null,
  executable: null,
  socat: null,
};

/** Creates a fresh workspace and an outside folder under one temp dir. */
export function makeWorkspace(sandbox: SandboxInfo = noSandbox): TempWorkspace {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'keel-tools-')));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  const sessionDir = path.join(root, 'session');
  for (const dir of [workspace, outside, path.join(sessionDir, 'artifacts')])
    mkdirSync(dir, { recursive: true });
  return {
    root,
    workspace,
    outside,
    sessionDir,
    ctx: (overrides = {}) => ({
      workspace,
      sessionDir,
      artifactsDir: path.join(sessionDir, 'artifacts'),
      idempotencyKey: 'ev1-test',
      redactor: testRedactor,
      sandbox,
      protectedGlobs: [],
      ...overrides,
    }),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The `{"error": ...}` message of a tool error outcome. */
export function errorOf(content: string): string {
  return (JSON.parse(content) as { error: string }).error;
}

/**
 * A temp tree shaped like a checkout session's box: `box/persistent/project` is the root (the project),
 * `box/session` the `/session` area, `box/persistent/docs` a read-only Persistent Dir (`/persistent/docs`),
 * `outside` what must stay untouched. `ctx()` is the tool context a session of this layout gets.
 */
export interface TempSessionBox extends TempWorkspace {
  box: string;
  project: string;
  sessionArea: string;
  docs: string;
  /** Writes a file below `box` (parents made). */
  put(rel: string, data?: string): void;
}

/** Creates the tree of TempSessionBox; the tool context's root is the project, with its areas. */
export function makeSessionBox(sandbox: SandboxInfo = noSandbox): TempSessionBox {
  const base = makeWorkspace(sandbox);
  const box = path.join(base.root, 'box');
  const project = path.join(box, 'persistent', 'project');
  const sessionArea = path.join(box, 'session');
  const docs = path.join(box, 'persistent', 'docs');
  for (const dir of [project, path.join(sessionArea, 'uploads'), docs]) mkdirSync(dir, { recursive: true });
  return {
    ...base,
    workspace: project,
    box,
    project,
    sessionArea,
    docs,
    put: (rel, data = 'x\n') => {
      mkdirSync(path.dirname(path.join(box, rel)), { recursive: true });
      writeFileSync(path.join(box, rel), data);
    },
    ctx: (overrides = {}) =>
      base.ctx({
        workspace: project,
        boxRoot: box,
        areas: [
          { prefix: '/session', root: sessionArea },
          { prefix: '/persistent/project', root: project },
          { prefix: '/persistent/docs', root: docs, protectedGlobs: ['**'], readOnly: true },
        ],
        ...overrides,
      }),
  };
}
