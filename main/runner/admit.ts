import { realpathSync } from 'node:fs';
import type { z } from 'zod';
import type { SandboxInfo } from '../sandbox/box.js';

/** The options every boxed run (a command, an interactive terminal) has in common, as checked. */
type BoxedRunInput = {
  workspace: string;
  cwd?: string | undefined;
  unconfinedApproved?: boolean | undefined;
};

/** How a run's refusal is worded and thrown: `what` names the options, `unconfined` ends the no-sandbox refusal. */
export type AdmitWords = { what: string; unconfined: string; fail: (message: string) => Error };

/**
 * The checks a boxed run passes before anything starts: its options valid by `schema`, no unconfined run
 * (`sandbox.kind === 'none'`) unless the user approved exactly that (`unconfinedApproved`), and a workspace
 * and working directory (default: the workspace) that exist. Returns the parsed options and both real paths;
 * throws `words.fail(message)` and starts nothing otherwise.
 */
export function admitBoxedRun<S extends z.ZodType<BoxedRunInput>>(
  schema: S,
  options: unknown,
  sandbox: SandboxInfo,
  words: AdmitWords,
): { input: z.output<S>; workspace: string; cwd: string } {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw words.fail(
      `Invalid ${words.what} options: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
    );
  }
  const input = parsed.data;
  if (sandbox.kind === 'none' && input.unconfinedApproved !== true) {
    throw words.fail(`No OS sandbox is available (${sandbox.reason}); ${words.unconfined}`);
  }
  const workspace = realPathOf(input.workspace, 'workspace', words.fail);
  const cwd = realPathOf(input.cwd ?? workspace, 'working directory', words.fail);
  return { input, workspace, cwd };
}

/** The real path of a folder a run needs, or the caller's error saying it does not exist. */
function realPathOf(target: string, what: string, fail: (message: string) => Error): string {
  try {
    return realpathSync(target);
  } catch {
    throw fail(`The ${what} ${target} does not exist.`);
  }
}
