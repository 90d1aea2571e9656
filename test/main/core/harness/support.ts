import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createHarness } from '../../../../main/core/harness/harness.js';
import { runningView } from '../../../../main/core/persistent/viewHolder.js';
import type { HarnessOptions, PersistentDirOption } from '../../../../main/core/harness/types.js';
import type { ProviderServer, ScriptStep } from '../../../support/providerServer.js';

/** Every event of a session, read from its log (the shared helper). */
export { eventsOf } from '../../../support/sessionFixture.js';

/** A harness on a scripted provider server. */
export function harnessFor(
  home: string,
  server: ProviderServer,
  persistentDirs: Record<string, PersistentDirOption>,
  extra: Partial<HarnessOptions> = {},
) {
  return createHarness({
    home,
    model: {
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: server.openaiBaseUrl,
      contextWindow: 32_000,
    },
    persistentDirs,
    policy: 'full-auto',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    ...extra,
  });
}

/** A scripted step calling one tool. */
export function callTool(
  name: string,
  args: Record<string, unknown>,
  id?: string,
): Extract<ScriptStep, { kind: 'reply' }> {
  return { kind: 'reply', toolCalls: [{ ...(id ? { id } : {}), name, arguments: args }] };
}

/** The content of the tool result messages the model got in the newest request, in order. */
export function toolResultsSeen(server: ProviderServer): string[] {
  const body = server.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
  return body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

/** Text of a file, or undefined when missing. */
export function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes files (relative path → text) under root. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

/**
 * Where a checkout's files are read and written from the test: the checkout itself, or (issue #36) a copy-on-write
 * view's merged folder through the holder this process runs (`KEEL_CHECKOUT_KIND=view` runs these suites on views).
 */
export function filesOf(checkout: string): string {
  const dataDir = path.dirname(path.dirname(path.dirname(checkout)));
  const view = runningView(dataDir, checkout);
  return view === undefined ? checkout : `/proc/${view.pid}/root${checkout}`;
}

/**
 * Git in a checkout as the model's git sees it: in the checkout, or (issue #36) in a copy-on-write view's holder
 * namespace, where its files are (git given `/proc/<pid>/root/...` resolves it to Keel's own `/`: an empty folder).
 */
export function gitIn(checkout: string, ...args: string[]): string {
  const dataDir = path.dirname(path.dirname(path.dirname(checkout)));
  const view = runningView(dataDir, checkout);
  const gitArgs = ['-c', 'user.name=T', '-c', 'user.email=t@t', ...args];
  const [file, ...rest] =
    view === undefined ? ['git', ...gitArgs] : view.enter(['git', '-C', checkout, ...gitArgs]);
  return execFileSync(file as string, rest, {
    cwd: view === undefined ? checkout : undefined,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
}
