import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { ensureCliBuilt } from '../support/cli.js';
import { keel } from '../support/keelProcess.js';
import { ProviderServer, type ScriptedToolCall } from '../support/providerServer.js';
import { eventsOf, newSessionArgs } from '../support/sessionFixture.js';

// Issue 38: "refusal messages show the model absolute host paths (the Keel home, session ids); say what the
// model needs in project terms." A checkout session's root lies in the Keel home
// (<home>/sessions/<id>/workspace/persistent/project), so a refusal that printed where a path resolves, or
// which folder on the way is not a folder, told the model the home and its own session id. Every call below
// is refused; none of the answers may name a host path, and each still says what is wrong.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-attack-refusals-')));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'README.md'), 'readme\n');
  fs.writeFileSync(path.join(project, 'src', 'app.ts'), 'export {};\n');
  // A link out of the project: following it is an escape, and the refusal must not say where it leads.
  fs.symlinkSync(dir, path.join(project, 'up'));
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Each refused call and what its answer must still say, in the model's terms. */
const REFUSED: [string, Record<string, unknown>, RegExp][] = [
  ['read_file', { path: '../../x.txt' }, /escapes the workspace: it leads outside the project folder/],
  ['read_file', { path: 'up/home/settings.json' }, /escapes the workspace/],
  ['list_dir', { path: '../..' }, /escapes the workspace/],
  ['grep', { pattern: 'x', path: '../../../..' }, /escapes the workspace/],
  ['write_file', { path: '../../../escaped.txt', content: 'x' }, /escapes the workspace/],
  ['write_file', { path: 'README.md/inner.txt', content: 'x' }, /not a directory/],
  ['read_file', { path: 'src/app.ts/x' }, /.+/],
  ['edit_file', { path: 'up/project/README.md', old_string: 'readme', new_string: 'x' }, /escapes/],
  [
    'apply_patch',
    { input: '*** Begin Patch\n*** Add File: ../../up/more.txt\n+x\n*** End Patch\n' },
    /escapes the workspace: it leads outside the project folder/,
  ],
  ['run_command', { command: 'true', cwd: '../..' }, /escapes the workspace/],
  // A folder of the session outside the box's writable folders (the sealed record of outputs).
  ['run_command', { command: 'true', cwd: '/artifacts' }, /commands cannot run/],
];

describe('attack: refusals name no host path', () => {
  it("a checkout session's refused calls show neither the Keel home nor the session id", async () => {
    const calls: ScriptedToolCall[] = REFUSED.map(([name, args], index) => ({
      id: `r${index}`,
      name,
      arguments: args,
    }));
    server.enqueue({ kind: 'reply', toolCalls: calls }, { kind: 'reply', text: 'done' });
    const run = await keel(
      home,
      newSessionArgs({ project, server }, { policy: 'full-auto', prompt: 'try things' }),
    );
    expect(run.code, run.stderr).toBe(0);
    const [id] = fs.readdirSync(path.join(home, 'sessions'));
    const results = eventsOf(home, id as string).filter(
      (e): e is EventOf<'tool_result'> => e.kind === 'tool_result',
    );
    expect(results).toHaveLength(calls.length);
    for (const [index, [name, args, says]] of REFUSED.entries()) {
      const result = results.find((r) => r.toolCallId === `r${index}`);
      const shown = `${name} ${JSON.stringify(args)}: ${result?.content}`;
      expect(result?.isError, shown).toBe(true);
      expect(result?.content, shown).not.toContain(dir);
      expect(result?.content, shown).not.toContain(id as string);
      expect(result?.content, shown).toMatch(says);
    }
    expect(fs.existsSync(path.join(dir, 'escaped.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(project, 'README.md'), 'utf8')).toBe('readme\n');
  }, 90_000);
});
