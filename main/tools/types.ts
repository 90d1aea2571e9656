import type { z } from 'zod';
import type { BackgroundFact, BackgroundRecord } from '../common/backgroundEvents.js';
import type { ToolImage, ToolMode } from '../common/events.js';
import type { NetworkPolicy, SandboxInfo } from '../sandbox/box.js';
import type { Redactor } from '../sandbox/redact.js';

export type { ToolMode };

/**
 * What a tool does to the world: the approval gate and resume treat each kind differently. A `subagent`
 * tool runs a child session; the turn engine hands it to the subagent runner instead of executing it. A
 * `plan` tool (present_plan, issue #30) changes nothing and always waits for the user: its approval request
 * holds the plan, answered by plan_approved / plan_rejected, never by a grant or a rule.
 */
export type ToolKind = 'read' | 'edit' | 'command' | 'subagent' | 'plan';

/** The part of the sandbox's redactor tools use: whole-text redaction, safe to apply twice. */
export type TextRedactor = Pick<Redactor, 'redact'>;

/**
 * A folder the model addresses by an absolute prefix of its own, as the session API names it (`/session`, the
 * session's private area; `/persistent/<name>`, a Persistent Dir's checkout). Paths in it are confined to it
 * exactly as paths in the root are confined to the root.
 */
export interface ToolArea {
  /** `/session` or `/persistent/<name>`, without a trailing slash. */
  prefix: string;
  /** Real path of the folder. */
  root: string;
  /** Globs relative to `root` whose writes need approval (`**` for a read-only Persistent Dir). */
  protectedGlobs?: readonly string[];
  /** A read-only Persistent Dir: every write needs approval, and the approval says why. */
  readOnly?: boolean;
  /** A record no tool may change (`/artifacts`): every write is refused, approved or not. */
  sealed?: boolean;
}

/**
 * Everything a tool may touch while it runs. `workspace` is the real (symlink-free) root that relative
 * path arguments start from and are confined to, `areas` the other folders a path may name; nothing outside
 * them is read or written by a tool.
 */
export interface ToolContext {
  /**
   * Real path of the model's root (already passed through realpath): the project's checkout or folder for a
   * session, where relative paths start, commands run by default, and paths shown to people are relative to.
   */
  workspace: string;
  /** The other folders a path argument may name by prefix (`/session/...`, `/persistent/<name>/...`). */
  areas?: readonly ToolArea[];
  /**
   * Real path of the folder a command's box makes writable; default `workspace`. A checkout session's
   * `<dataDir>/workspace`, which holds the root and every area, so commands see them all as before.
   */
  boxRoot?: string;
  /** The session's data directory. */
  sessionDir: string;
  /** Where whole command outputs are captured; handles given to the model are relative to it. */
  artifactsDir: string;
  /** Aborts a running tool (user stop, session end). */
  signal?: AbortSignal;
  /** The key recorded in tool_call_started (`ev<seq>-<tool>`); names artifacts, keeps re-runs apart. */
  idempotencyKey: string;
  /** The model's id of the call being run (background commands' events name it). */
  toolCallId?: string;
  /** Applied to every string a tool returns before it reaches the model, the log or the UI. */
  redactor: TextRedactor;
  /** The OS sandbox that run_command confines commands with (from detectSandbox()). */
  sandbox: SandboxInfo;
  /** Network policy of commands; default no network at all. web_fetch runs without asking for hosts it allows. */
  network?: NetworkPolicy;
  /**
   * Test seam of web_fetch (issue #32): exact local addresses it may connect to (a test's loopback server).
   * Set only from the harness's programmatic options (HarnessOptions.webFetch), never from a file.
   */
  fetchTestAddresses?: readonly string[];
  /** Live, redacted command output for the UI terminal. */
  onOutput?: (chunk: string) => void;
  /** Extra globs relative to `workspace` that need approval to write, on top of .git/.keel/.vscode. */
  protectedGlobs: readonly string[];
  /** Host paths a boxed command may read but not write (a checkout's git folder, linked dependency folders). */
  boxReadOnly?: readonly string[];
  /**
   * Host paths (real) no tool and no boxed command may reach (the Keel home: other sessions, settings, MCP
   * approvals). File tools refuse them as if outside and listings skip them, unless one holds the folder the
   * path belongs to (a checkout or /session inside the home: only that folder is reachable, as in the box).
   */
  boxHidden?: readonly string[];
  /**
   * Folder (relative to `workspace`) a command runs in when the call names none. Default: the root. Only
   * sessions from before the project was the root set it (`persistent/project`, their project's checkout).
   */
  commandCwd?: string;
  /**
   * Set by the approval gate when the user approved this exact call: a protected path may be
   * written, and a command may run without an OS sandbox.
   */
  approved?: boolean;
  /**
   * Issue #32: what the session's log says of a background command (undefined: never started in this session), so
   * command_output and stop_command answer a handle this Keel no longer runs with how it ended.
   */
  backgroundRecord?: (handle: string) => BackgroundRecord | undefined;
}

/** A tool's result as the harness records it; `content` is exactly what the model sees. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Artifact handle (relative to artifactsDir) holding the full output. */
  artifact?: string;
  /** Images kept as artifacts (relative to artifactsDir), their type checked from their bytes. */
  images?: ToolImage[];
  /** sha256 (hex) of the file before the change; null when the file did not exist. */
  preImageHash?: string | null;
  /** sha256 (hex) of the file after the change. */
  postImageHash?: string;
  /** Unified diff of the change (redacted), for approvals and the UI. */
  diff?: string;
  /** The path a file tool acted on, as shown to people: relative to the root, or under an area's prefix. */
  path?: string;
  exitCode?: number | null;
  signal?: string | null;
  timedOut?: boolean;
  durationMs?: number;
  /** Set when the call was not executed because it needs the user's approval; the reason to show. */
  approvalRequired?: string;
  /** Set by applyEditOnce when the file already had the post-image and nothing was written. */
  alreadyApplied?: boolean;
  /** Set by applyEditOnce when the file matched neither the recorded pre- nor post-image. */
  conflict?: boolean;
  /** Background commands' facts (issue #32), recorded right after the call's tool_result. */
  background?: BackgroundFact[];
}

/** One file of a change to several files (apply_patch): its images before and after, null = absent. */
export interface FileImages {
  /** The path as shown: root-relative, or under an area's prefix. */
  path: string;
  /** sha256 (hex) of the file before the change; null when it did not exist. */
  preImageHash: string | null;
  /** sha256 (hex) of the file after the change; null when the change deletes it (or moves it away). */
  postImageHash: string | null;
  /** The file it was moved from (`*** Move to:`), as shown; that file's own entry says it ends absent. */
  fromPath?: string;
}

/**
 * The recorded hashes of a change, as tool_call_started keeps them for resume. A one-file change: the file's
 * hashes. A change to several files: `files`, one entry per file, and hashes of the whole set
 * (`fileSetHash` of the pre- and of the post-images), so a reader that knows only the two fields still
 * sees a recorded change.
 */
export interface ExpectedImages {
  /** sha256 (hex) of the file before the change; null when the file did not exist. */
  preImageHash: string | null;
  postImageHash: string;
  /** Each file of a change to several files. */
  files?: FileImages[];
}

/**
 * What grants match a call on: the path it acts on (as shown: root-relative or `/session/...`), the shell
 * command it runs. A call on several files (apply_patch) names them all in `paths`: a path grant covers it
 * only when it covers every one.
 */
export interface CallSubject {
  path?: string;
  paths?: string[];
  command?: string;
  /** The host a web_fetch call reaches (a `domain:` grant covers it). */
  host?: string;
}

/**
 * What the approval gate sees of one call before it runs, computed without side effects. `ok: false`: the
 * call cannot apply (an escaping path, old_string missing…); its tool error answers it, there is nothing
 * to approve.
 */
export type CallPreview =
  | {
      ok: true;
      subject: CallSubject;
      /** Why the box insists on approval whatever the policy (a protected path), or null. */
      protectedReason: string | null;
      /**
       * Why this call asks even where the policy would let its kind run (web_fetch: a host off the network
       * allowlist); unlike a protected path, a grant or an allow rule covering the subject answers it.
       */
      asks?: string;
      /** The change the call would make (redacted): shown with the request, compared again after approval. */
      diff?: string;
      /** Set by `recorded_images` tools: what tool_call_started records so the change applies at most once. */
      images?: ExpectedImages;
      /**
       * The tool's own plan of the change (opaque to the engine, never recorded): handed back to `applyOnce`
       * with these images, which writes it instead of planning again.
       */
      plan?: unknown;
      /** Said with an approval request besides the policy's reason (a background command: it keeps running). */
      note?: string;
    }
  | { ok: false; outcome: ToolOutcome };

/**
 * How a call that started but whose result was never recorded is settled on resume, without repeating a
 * side effect. `rerun`: it has none (reads). `recorded_images`: `applyOnce` with the images tool_call_started
 * kept writes at most once (edits; also how the first run applies them). `ask`: an approval request saying
 * the outcome is unknown (commands), after `endLeftovers`. `child_session`: the subagent runner resumes the child from its own log.
 */
export type ResumeRule<A = unknown> =
  | { rule: 'rerun' }
  | {
      rule: 'ask';
      /**
       * Ends whatever an earlier run of the call's kind may have left running (a command's box), and waits
       * for it, before the call is settled; resolves with how many it ended.
       */
      endLeftovers?(ctx: ToolContext): Promise<number>;
    }
  | { rule: 'child_session' }
  | {
      rule: 'recorded_images';
      /**
       * Post-image present → `alreadyApplied`; pre-image present → applied; else `conflict`. Never throws;
       * redacted. With `plan` (its preview's, just computed: the call's first run), that plan is written as it
       * is, confined again at the write; without (resume), the file is checked and the change planned again.
       */
      applyOnce(args: A, ctx: ToolContext, images: ExpectedImages, plan?: unknown): Promise<ToolOutcome>;
    };

/**
 * One tool: its model-facing name and description, its zod argument schema, how to run it, and how it
 * describes itself to the approval gate and to resume. The turn engine knows tools only through this.
 */
export interface ToolModule<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: S;
  /**
   * The JSON Schema providers are told, when the tool brings its own (an MCP server's); else it is generated
   * from `parameters`, which must then enforce the same schema.
   */
  inputJsonSchema?: Record<string, unknown>;
  /** The least permissive mode whose registry contains this tool. */
  mode: ToolMode;
  /** What it does to the world, as the policy sees it: `read` tools change nothing. */
  kind: ToolKind;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutcome>;
  /** What an approval request for this call shows and grants match on; never throws, writes nothing. */
  preview(args: z.infer<S>, ctx: ToolContext): Promise<CallPreview>;
  resume: ResumeRule<z.infer<S>>;
}

/** A tool as a provider is told about it: JSON Schema generated from the zod schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A thrown error whose message is safe and useful to show the model as a tool error. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
