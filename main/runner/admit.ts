import { z } from 'zod';
import type { SandboxInfo } from '../sandbox/box.js';
import { realpathNative } from '../sandbox/viewPath.js';

/** The options every boxed run (a command, an interactive terminal) has in common, as checked. */
type BoxedRunInput = {
  workspace: string;
  cwd?: string | undefined;
  unconfinedApproved?: boolean | undefined;
};

/** The folders a boxed run sees besides its workspace (wrapCommand's mounts), the same for every kind of run. */
export const BoxMounts = z.object({
  writable: z.array(z.string()).optional(),
  readOnly: z.array(z.string()).optional(),
  hidden: z.array(z.string()).optional(),
  home: z.string().optional(),
  hostHome: z.string().optional(),
  homeVariable: z.string().optional(),
});

/** Checked box mounts, as wrapCommand takes them. */
export type BoxMounts = z.output<typeof BoxMounts>;

/** The BoxMounts of a run's checked options (or of launch options), and nothing else of them. */
export function mountsOf(options: BoxMounts): BoxMounts {
  return {
    writable: options.writable,
    readOnly: options.readOnly,
    hidden: options.hidden,
    home: options.home,
    hostHome: options.hostHome,
    homeVariable: options.homeVariable,
  };
}

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
    // Under a view's holder the path keeps its `/proc/<pid>/root` prefix: the launch enters that namespace.
    return realpathNative(target);
  } catch {
    throw fail(`The ${what} ${target} does not exist.`);
  }
}
