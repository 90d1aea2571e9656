import { describe, expect, it } from 'vitest';

// Loaded at run time (the renderer is compiled by tsconfig.web.json); described by the shape used here.
type FileChange = { path: string; change: 'added' | 'modified' | 'deleted' };
type Dir = {
  dir: string;
  commit: 'auto' | 'manual';
  readOnly: boolean;
  onNewTurn: 'commit' | 'refuse' | 'discard';
  files: FileChange[];
  diff: string;
};
type Uncommitted = { hasCheckouts: boolean; dirs: Dir[]; newTurnWarning: string | null };
type History = {
  turns: {
    turn: number;
    prompt?: string;
    commits: { seq: number; at: string; dir: string; files: FileChange[] }[];
  }[];
};
type Row = { kind: string; key: string; [field: string]: unknown };
type RowsModule = {
  foldChangeRows: (
    uncommitted: Uncommitted | undefined,
    history: History | undefined,
    conflicts: ReadonlyMap<string, ReadonlySet<string>>,
  ) => Row[];
  describeNewTurnEffect: (dirs: Dir[]) => string | null;
  fileKey: (ref: { dir: string; path: string; commitSeq?: number }) => string;
  ROW_HEIGHTS: Record<string, number>;
};
type PatchModule = { classifyPatchLines: (lines: readonly string[]) => string[] };
type LanguageModule = {
  languageForPath: (
    path: string,
    languages: { id: string; extensions?: string[]; filenames?: string[] }[],
  ) => string;
};
const rowsPath = '../../renderer/src/screens/changes/changeRows.js';
const rows = (await import(/* @vite-ignore */ rowsPath)) as RowsModule;
const patchPath = '../../renderer/src/components/monaco/patchLines.js';
const patch = (await import(/* @vite-ignore */ patchPath)) as PatchModule;
const languagePath = '../../renderer/src/components/monaco/language.js';
const language = (await import(/* @vite-ignore */ languagePath)) as LanguageModule;

const dir = (name: string, files: FileChange[], fields: Partial<Dir> = {}): Dir => ({
  dir: name,
  commit: 'manual',
  readOnly: false,
  onNewTurn: 'refuse',
  files,
  diff: '',
  ...fields,
});
const at = '2025-03-01T10:00:00.000Z';

describe('the Changes list', () => {
  it('lists uncommitted files per dir first, then each turn newest first with its commits and files', () => {
    const uncommitted: Uncommitted = {
      hasCheckouts: true,
      dirs: [
        dir('project', [
          { path: 'src/a.ts', change: 'modified' },
          { path: 'src/b.ts', change: 'added' },
        ]),
      ],
      newTurnWarning: 'x',
    };
    const history: History = {
      turns: [
        {
          turn: 1,
          prompt: 'first',
          commits: [{ seq: 5, at, dir: 'project', files: [{ path: 'a', change: 'added' }] }],
        },
        {
          turn: 2,
          prompt: 'second',
          commits: [{ seq: 9, at, dir: 'project', files: [{ path: 'b', change: 'deleted' }] }],
        },
      ],
    };
    const folded = rows.foldChangeRows(uncommitted, history, new Map([['project', new Set(['src/b.ts'])]]));
    expect(folded.map((row) => row.kind)).toEqual([
      'section',
      'dir',
      'file',
      'file',
      'section',
      'turn',
      'commit',
      'file',
      'turn',
      'commit',
      'file',
    ]);
    expect(folded[2]).toMatchObject({ ref: { dir: 'project', path: 'src/a.ts' }, conflict: false });
    expect(folded[3]).toMatchObject({ ref: { dir: 'project', path: 'src/b.ts' }, conflict: true });
    expect(folded[5]).toMatchObject({ turn: 2, prompt: 'second' });
    expect(folded[7]).toMatchObject({ ref: { dir: 'project', path: 'b', commitSeq: 9 }, change: 'deleted' });
    expect(new Set(folded.map((row) => row.key)).size).toBe(folded.length);
    for (const row of folded) expect(rows.ROW_HEIGHTS[row.kind]).toBeGreaterThan(0);
  });

  it('says when there is nothing, and waits for data before saying so', () => {
    const empty = rows.foldChangeRows(
      { hasCheckouts: true, dirs: [], newTurnWarning: null },
      { turns: [] },
      new Map(),
    );
    expect(empty.filter((row) => row.kind === 'empty').map((row) => row.text)).toEqual([
      'No uncommitted changes.',
      'Nothing committed yet.',
    ]);
    expect(rows.foldChangeRows(undefined, undefined, new Map()).some((row) => row.kind === 'empty')).toBe(
      false,
    );
  });

  it('keys a file version by commit, dir and path', () => {
    expect(rows.fileKey({ dir: 'd', path: 'p' })).not.toBe(
      rows.fileKey({ dir: 'd', path: 'p', commitSeq: 3 }),
    );
    expect(rows.fileKey({ dir: 'd', path: 'p', commitSeq: 3 })).toBe(
      rows.fileKey({ dir: 'd', path: 'p', commitSeq: 3 }),
    );
  });

  it('warns before a new turn only when changes are at stake, naming the dirs and what happens', () => {
    expect(rows.describeNewTurnEffect([])).toBeNull();
    expect(
      rows.describeNewTurnEffect([
        dir('project', [{ path: 'a', change: 'added' }], { commit: 'auto', onNewTurn: 'commit' }),
      ]),
    ).toBeNull();
    expect(
      rows.describeNewTurnEffect([
        dir('project', [
          { path: 'a', change: 'added' },
          { path: 'b', change: 'added' },
        ]),
      ]),
    ).toContain('project (2 files) wait for review');
    expect(
      rows.describeNewTurnEffect([
        dir('docs', [{ path: 'a', change: 'added' }], { readOnly: true, onNewTurn: 'discard' }),
      ]),
    ).toBe('A new turn discards the changes in docs (1 file) (read-only for this session).');
  });
});

describe('unified patches as text', () => {
  it('tells content from headers by whether it sits inside a hunk', () => {
    const lines = [
      'diff --git a/x.sql b/x.sql',
      '--- a/x.sql',
      '+++ b/x.sql',
      '@@ -1,3 +1,3 @@',
      ' select 1;',
      '--- a SQL comment removed',
      '+++ one added',
      '\\ No newline at end of file',
      'diff --git a/y b/y',
    ];
    expect(patch.classifyPatchLines(lines)).toEqual([
      'header',
      'header',
      'header',
      'hunk',
      'context',
      'removed',
      'added',
      'context',
      'header',
    ]);
  });
});

describe('languageForPath', () => {
  const languages = [
    { id: 'typescript', extensions: ['.ts', '.tsx'] },
    { id: 'dts', extensions: ['.d.ts'] },
    { id: 'dockerfile', extensions: ['.dockerfile'], filenames: ['Dockerfile'] },
    { id: 'shell', extensions: ['.sh', '.bashrc'] },
  ];

  it('prefers an exact file name, then the longest extension, case-insensitively', () => {
    expect(language.languageForPath('src/app.ts', languages)).toBe('typescript');
    expect(language.languageForPath('types/index.d.ts', languages)).toBe('dts');
    expect(language.languageForPath('deploy/Dockerfile', languages)).toBe('dockerfile');
    expect(language.languageForPath('deploy/dockerfile', languages)).toBe('dockerfile');
    expect(language.languageForPath('SRC/APP.TSX', languages)).toBe('typescript');
    expect(language.languageForPath('home/.bashrc', languages)).toBe('shell');
  });

  it('falls back to plain text', () => {
    expect(language.languageForPath('notes/README', languages)).toBe('plaintext');
    expect(language.languageForPath('', languages)).toBe('plaintext');
    expect(language.languageForPath('windows\\dir\\run.sh', languages)).toBe('shell');
  });
});
