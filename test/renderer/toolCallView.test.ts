import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json: the module is loaded at run time, described by its shape here.
type View = { kind: string; [field: string]: unknown };
type ViewModule = {
  callView: (tool: string, args: string) => View;
  readRange: (offset: number | undefined, limit: number | undefined) => string | undefined;
  formatDuration: (ms: number) => string;
  outputForPeople: (content: string) => string;
};
const modulePath = '../../renderer/src/screens/session/items/toolCallView.js';
const { callView, readRange, formatDuration, outputForPeople } = (await import(
  /* @vite-ignore */ modulePath
)) as ViewModule;

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

  it("says where a command's whole output is in people's terms, for each wording a log holds (#37)", () => {
    const now =
      'line 1\n[... 120000 bytes left out here; the whole output is in /artifacts/ev11-run_command.log]\nline 9\n' +
      '[exit code 0, 12 ms]\n[the output above is cut to its head and tail (130000 bytes in all); the whole output ' +
      'is /artifacts/ev11-run_command.log: read it with read_file (offset, limit) or search it with grep]';
    const before =
      'line 1\n[... 120000 bytes omitted; full output in artifact /artifacts/ev11-run_command.log]\nline 9\n' +
      '[exit code 0, 12 ms]\n[full output: /artifacts/ev11-run_command.log, 130000 bytes; read_file or grep it for the rest]';
    const shown =
      'line 1\n[… 120,000 bytes not shown here: Open in terminal shows the whole output]\nline 9\n[exit code 0, 12 ms]';
    expect(outputForPeople(now)).toBe(shown);
    expect(outputForPeople(before)).toBe(shown);
    expect(
      outputForPeople('ok\n[exit code 0, 3 ms]\n[full output: artifact ev3-run_command.log, 4 bytes]'),
    ).toBe('ok\n[exit code 0, 3 ms]');
    expect(
      outputForPeople(
        '[started in the background as bg-dev; read more with command_output, stop it with stop_command; its ' +
          'whole output is written to /artifacts/ev3-run_command.1.log (read_file, grep)]\nready\n' +
          '[next read: command_output {"handle": "bg-dev", "since": 6}]',
      ),
    ).toBe('[started in the background as bg-dev: the terminal dock shows it live and can stop it]\nready');
    expect(outputForPeople('[bg-x already ended; full output: /artifacts/a.log]\nbye')).toBe(
      '[bg-x had already ended when the call returned]\nbye',
    );
    // Output that merely looks like a note inside a line stays.
    expect(outputForPeople('echo [full output: x]')).toBe('echo [full output: x]');
  });

  it('says durations as people do', () => {
    expect(formatDuration(420.4)).toBe('420 ms');
    expect(formatDuration(3240)).toBe('3.2 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});
