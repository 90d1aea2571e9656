import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeToolCall } from '../../../main/tools/execute.js';
import { toolLimits } from '../../../main/tools/limits.js';
import { didYouMean, nearMatches } from '../../../main/tools/nearMatches.js';
import { createToolRegistry } from '../../../main/tools/registry.js';
import type { ToolOutcome } from '../../../main/tools/types.js';
import { errorOf, makeSessionBox, type TempSessionBox } from './helpers.js';

let t: TempSessionBox;
beforeEach(() => {
  t = makeSessionBox();
  t.put('persistent/project/src/server.js');
  t.put('persistent/project/src/routes.js');
  t.put('persistent/project/test/server.test.js');
  t.put('persistent/project/node_modules/server/server.js');
  t.put('session/uploads/sales.csv');
});
afterEach(() => t.cleanup());

const registry = createToolRegistry('write');
const run = (name: string, args: Record<string, unknown>): Promise<ToolOutcome> =>
  executeToolCall(registry, { id: 'c', name, arguments: JSON.stringify(args) }, t.ctx());

describe('a path that does not exist', () => {
  it('answers with the near match: a typo, a missing folder, an old workspace-relative path', async () => {
    expect(errorOf((await run('read_file', { path: 'src/sever.js' })).content)).toBe(
      'path: "src/sever.js" does not exist; did you mean src/server.js?',
    );
    expect(errorOf((await run('read_file', { path: 'persistent/project/src/routes.js' })).content)).toBe(
      'path: "persistent/project/src/routes.js" does not exist; did you mean src/routes.js?',
    );
    expect(errorOf((await run('read_file', { path: 'routes.js' })).content)).toBe(
      'path: "routes.js" does not exist; did you mean src/routes.js?',
    );
  });

  it('offers at most three, nearest first, never from node_modules', async () => {
    const near = await nearMatches(t.ctx(), 'server.js', 'file');
    expect(near).toEqual(['src/server.js']);
    t.put('persistent/project/lib/server.js');
    t.put('persistent/project/app/server.js');
    t.put('persistent/project/web/server.js');
    expect(await nearMatches(t.ctx(), 'server.js', 'file')).toEqual([
      'app/server.js',
      'lib/server.js',
      'src/server.js',
    ]);
    expect(errorOf((await run('read_file', { path: 'server.js' })).content)).toBe(
      'path: "server.js" does not exist; did you mean app/server.js, lib/server.js or src/server.js?',
    );
  });

  it('offers folders to list_dir and run_command, files to the file tools, and says nothing when nothing is near', async () => {
    expect(errorOf((await run('list_dir', { path: 'srcs' })).content)).toBe(
      'path: "srcs" does not exist; did you mean src?',
    );
    expect(
      errorOf((await run('edit_file', { path: 'src/server.ts', old_string: 'a', new_string: 'b' })).content),
    ).toBe(
      'path: "src/server.ts" does not exist; did you mean src/server.js? (use write_file to create a file)',
    );
    expect(
      errorOf((await run('edit_file', { path: 'zzz/qqq.py', old_string: 'a', new_string: 'b' })).content),
    ).toBe('path: "zzz/qqq.py" does not exist; use write_file to create a file');
    expect(errorOf((await run('grep', { pattern: 'x', path: 'tests' })).content)).toBe(
      'path: "tests" does not exist; did you mean test?',
    );
    expect(errorOf((await run('read_file', { path: 'nothing/like/it.txt' })).content)).toBe(
      'path: "nothing/like/it.txt" does not exist',
    );
  });

  it('looks in the area the path names, and shows matches as they are addressed', async () => {
    expect(errorOf((await run('read_file', { path: '/session/uploads/sale.csv' })).content)).toBe(
      'path: "/session/uploads/sale.csv" does not exist; did you mean /session/uploads/sales.csv?',
    );
    expect(errorOf((await run('read_file', { path: path.join(t.project, 'src/route.js') })).content)).toBe(
      `path: "${path.join(t.project, 'src/route.js')}" does not exist; did you mean src/routes.js?`,
    );
  });

  it('walks a bounded number of entries, nearest levels first', async () => {
    expect(toolLimits.nearMatchMaxEntries).toBe(20_000);
    const crowd = path.join(t.project, 'y-crowd');
    mkdirSync(crowd);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(crowd, `f${i}`), '');
    t.put('persistent/project/z/deep/config.json');
    const bounded = { maxEntries: 20 };
    // Within the bound: the first level, src/ and test/ (walked before y-crowd/ fills the bound).
    expect(await nearMatches(t.ctx(), 'src/server.jss', 'file', bounded)).toEqual(['src/server.js']);
    // Past it: z/deep is never reached, so nothing is offered for it; without the bound it is.
    expect(await nearMatches(t.ctx(), 'z/deep/config.jsn', 'file', bounded)).toEqual([]);
    expect(await nearMatches(t.ctx(), 'z/deep/config.jsn', 'file')).toEqual(['z/deep/config.json']);
  });

  it('phrases one, two or three matches', () => {
    expect(didYouMean([])).toBe('');
    expect(didYouMean(['a'])).toBe('; did you mean a?');
    expect(didYouMean(['a', 'b'])).toBe('; did you mean a or b?');
    expect(didYouMean(['a', 'b', 'c'])).toBe('; did you mean a, b or c?');
  });
});
