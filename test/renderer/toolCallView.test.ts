import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json: the module is loaded at run time, described by its shape here.
type View = { kind: string; [field: string]: unknown };
type ViewModule = {
  callView: (tool: string, args: string) => View;
  readRange: (offset: number | undefined, limit: number | undefined) => string | undefined;
  formatDuration: (ms: number) => string;
};
const modulePath = '../../renderer/src/screens/session/items/toolCallView.js';
const { callView, readRange, formatDuration } = (await import(/* @vite-ignore */ modulePath)) as ViewModule;

describe('tool calls for people (issue 37)', () => {
  it('shows a command as typed, a read as a path and lines, an edit as a diff', () => {
    expect(
      callView('run_command', JSON.stringify({ command: 'npm test -- --watch=false', cwd: 'web' })),
    ).toEqual({
      kind: 'command',
      command: 'npm test -- --watch=false',
      cwd: 'web',
    });
    expect(callView('read_file', JSON.stringify({ path: 'src/app.ts', offset: 10, limit: 50 }))).toEqual({
      kind: 'read',
      path: 'src/app.ts',
      range: 'lines 10–59',
    });
    expect(readRange(undefined, undefined)).toBeUndefined();
    expect(readRange(5, undefined)).toBe('from line 5');
    expect(readRange(7, 1)).toBe('line 7');
    const edit = callView(
      'edit_file',
      JSON.stringify({
        path: 'src/app.ts',
        old_string: 'a\nport = 3000\nb',
        new_string: 'a\nport = 8080\nb',
      }),
    );
    expect(edit).toMatchObject({ kind: 'edit', path: 'src/app.ts', replaceAll: false });
    const patch = String(edit['patch']);
    expect(patch).toContain('-port = 3000');
    expect(patch).toContain('+port = 8080');
    expect(patch).not.toContain('\\n');
    expect(patch.startsWith('@@')).toBe(true);
  });

  it('shows other calls as fields whose text keeps its lines, never JSON escapes', () => {
    const view = callView(
      'web_fetch',
      JSON.stringify({ url: 'https://example.com', prompt: 'line one\nline two' }),
    );
    expect(view).toEqual({
      kind: 'fields',
      fields: [
        { name: 'url', value: 'https://example.com', block: false },
        { name: 'prompt', value: 'line one\nline two', block: true },
      ],
    });
    expect(callView('apply_patch', JSON.stringify({ input: '*** Begin Patch\n*** End Patch' }))).toEqual({
      kind: 'patch',
      text: '*** Begin Patch\n*** End Patch',
    });
    expect(callView('anything', 'not json')).toEqual({ kind: 'raw', text: 'not json' });
  });

  it('says durations as people do', () => {
    expect(formatDuration(420.4)).toBe('420 ms');
    expect(formatDuration(3240)).toBe('3.2 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});
