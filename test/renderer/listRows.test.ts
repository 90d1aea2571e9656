import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json: the module is loaded at run time, described by its shape here.
type Summary = {
  id: string;
  title?: string;
  projectFolder: string;
  parentId?: string;
  projectExists: boolean;
};
type Row = { type: string; key: string; parent?: { id: string; title: string | undefined } };
const modulePath = '../../renderer/src/screens/browser/listRows.js';
const { buildListRows } = (await import(/* @vite-ignore */ modulePath)) as {
  buildListRows: (sessions: readonly Summary[], collapsed: ReadonlySet<string>) => Row[];
};

const s = (id: string, parentId?: string, projectFolder = '/p'): Summary => ({
  id,
  title: `T ${id}`,
  projectFolder,
  projectExists: true,
  ...(parentId ? { parentId } : {}),
});

describe('the session list nests forks under their parent (issue 37)', () => {
  it('puts a child right under its parent, grandchildren under it, others newest first', () => {
    // Newest first, as sessions.list answers: the fork is newer than its parent.
    const rows = buildListRows(
      [s('fork2', 'a'), s('b'), s('fork1', 'a'), s('a'), s('forkOfFork', 'fork1')],
      new Set(),
    );
    expect(rows.map((row) => row.key)).toEqual([
      'project:/p',
      'session:b',
      'session:a',
      'session:fork2',
      'session:fork1',
      'session:forkOfFork',
    ]);
    expect(rows.find((row) => row.key === 'session:fork1')?.parent).toEqual({ id: 'a', title: 'T a' });
    expect(rows.find((row) => row.key === 'session:a')?.parent).toBeUndefined();
  });

  it('lists a child whose parent is not loaded, or in another folder, in its own place', () => {
    const rows = buildListRows([s('orphan', 'gone'), s('x', 'y', '/q'), s('y', undefined, '/r')], new Set());
    expect(rows.filter((row) => row.type === 'session').map((row) => [row.key, row.parent])).toEqual([
      ['session:orphan', undefined],
      ['session:x', undefined],
      ['session:y', undefined],
    ]);
  });
});
