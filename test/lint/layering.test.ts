import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

/*
 * The layering table in eslint.config.js, run by ESLint itself on real files of the tree with one import
 * added: each "never" of ARCHITECTURE.md fails with its reason, and an import the table allows passes.
 */

// The repository's config as it is, without the type-aware rules: only boundaries/dependencies is read here,
// and a TypeScript program per file linted took ~25 s of the suite.
const eslint = new ESLint({ cwd: REPO_ROOT, overrideConfig: [tseslint.configs.disableTypeChecked] });

async function layeringErrors(file: string, extraImport: string): Promise<string[]> {
  const filePath = path.join(REPO_ROOT, file);
  const text = `${extraImport}\n${fs.readFileSync(filePath, 'utf8')}`;
  const [result] = await eslint.lintText(text, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'boundaries/dependencies')
    .map((message) => message.message);
}

describe('layering', () => {
  it('refuses each never with its reason', async () => {
    expect(await layeringErrors('main/tools/registry.ts', "import '../core/log/sessionLog.js';")).toEqual([
      'The parts the harness uses never import the harness or a host: share vocabulary through main/common.',
    ]);
    expect(await layeringErrors('main/core/turn/state.ts', "import '../../ipc/handlers.js';")).toEqual([
      'main/core is the harness every host uses: it never imports a host (electron, ipc, server, cli).',
    ]);
    expect(await layeringErrors('main/mcp/session.ts', "import '../core/log/sessionLog.js';")).toEqual([
      'The parts the harness uses never import the harness or a host: share vocabulary through main/common.',
    ]);
    expect(await layeringErrors('main/common/clock.ts', "import '../store/settings.js';")).toEqual([
      'main/common is the leaf: it imports nothing from main/ but itself.',
    ]);
    expect(
      await layeringErrors('renderer/src/api/keel.ts', "import '../../../main/ipc/handlers.js';"),
    ).toEqual([
      'The renderer is untrusted: it imports only the IPC contract (main/ipc/contract.ts) from main/.',
    ]);
  }, 60_000);

  it("holds the core's front door: hosts import main/core/harness only, no core folder imports it", async () => {
    const host =
      "A host goes through the core's front door: import main/core/harness (its index.ts), never a room of the core or what lies below it.";
    expect(await layeringErrors('main/ipc/hub.ts', "import '../core/log/sessionLog.js';")).toEqual([host]);
    expect(await layeringErrors('main/cli/format.ts', "import '../core/approvals/decide.js';")).toEqual([
      host,
    ]);
    expect(await layeringErrors('main/cli/format.ts', "import '../store/settings.js';")).toEqual([host]);
    expect(await layeringErrors('main/server/server.ts', "import '../core/hostStart.js';")).toEqual([host]);
    expect(await layeringErrors('main/electron/keys.ts', "import '../sandbox/box.js';")).toEqual([host]);
    // keel acp (issue 33) is a host too: the front door and main/common only.
    expect(await layeringErrors('main/acp/agent.ts', "import '../core/log/sessionLog.js';")).toEqual([host]);
    expect(await layeringErrors('main/acp/agent.ts', "import '../store/settings.js';")).toEqual([host]);
    expect(await layeringErrors('main/acp/agent.ts', "import '../ipc/handlers.js';")).toEqual([
      'imports only point down: see LAYERS in eslint.config.js for what this folder may import',
    ]);
    expect(await layeringErrors('main/core/turn/state.ts', "import '../../acp/agent.js';")).toEqual([
      'main/core is the harness every host uses: it never imports a host (electron, ipc, server, cli).',
    ]);
    expect(await layeringErrors('main/core/turn/state.ts', "import '../harness/index.js';")).toEqual([
      'main/core/harness is the front door over the core: no other core folder imports it (move the shared piece down into the room that owns it).',
    ]);
    expect(await layeringErrors('main/core/paths.ts', "import './harness/turns.js';")).toEqual([
      'main/core/harness is the front door over the core: no other core folder imports it (move the shared piece down into the room that owns it).',
    ]);
    // Through the door: the hosts, the library entry (keel/core), and the door over the core's rooms.
    expect(await layeringErrors('main/ipc/hub.ts', "import '../core/harness/index.js';")).toEqual([]);
    expect(await layeringErrors('main/cli/format.ts', "import '../core/harness/index.js';")).toEqual([]);
    expect(await layeringErrors('main/acp/agent.ts', "import '../core/harness/index.js';")).toEqual([]);
    expect(await layeringErrors('main/cli/format.ts', "import '../acp/agent.js';")).toEqual([]);
    expect(await layeringErrors('main/core/index.ts', "import './harness/turns.js';")).toEqual([]);
    expect(await layeringErrors('main/core/harness/turns.ts', "import '../log/sessionLog.js';")).toEqual([]);
    expect(await layeringErrors('main/core/harness/turns.ts', "import '../../store/settings.js';")).toEqual(
      [],
    );
  }, 60_000);

  it('lets an import the table allows through, and the renderer import the contract', async () => {
    expect(await layeringErrors('main/core/turn/state.ts', "import '../../store/settings.js';")).toEqual([]);
    expect(
      await layeringErrors('renderer/src/api/keel.ts', "import '../../../main/ipc/contract.js';"),
    ).toEqual([]);
    expect(await layeringErrors('main/core/turn/state.ts', "import '../../mcp/config.js';")).toEqual([]);
    // main/mcp sits beside the tools: it may not import the store (the core hands it what it needs).
    expect(await layeringErrors('main/mcp/config.ts', "import '../store/settings.js';")).toEqual([
      'imports only point down: see LAYERS in eslint.config.js for what this folder may import',
    ]);
    // Not in any row: the store may not import the tools.
    expect(await layeringErrors('main/store/settings.ts', "import '../tools/registry.js';")).toEqual([
      'imports only point down: see LAYERS in eslint.config.js for what this folder may import',
    ]);
  }, 60_000);
});
