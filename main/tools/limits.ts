/**
 * The bounds every tool result obeys, so one call can never flood the model's window or the
 * harness's memory. Units are in the names. Tools take overrides only from tests.
 */
export const toolLimits = {
  /** read_file: lines returned when the model gives no limit. */
  readDefaultLines: 2000,
  /** read_file: the most lines one call may ask for. */
  readMaxLines: 10_000,
  /** read_file: characters of numbered output per call, after which it stops with a note. */
  readMaxOutputChars: 100_000,
  /** read_file: longest single line shown; longer lines are cut with a marker. */
  readMaxLineChars: 2000,
  /** read_file / edit_file: bytes read from one file; bigger files are refused for editing. */
  fileMaxBytes: 16 * 1024 * 1024,
  /** list_dir: deepest level shown (1 = direct children). */
  listMaxDepth: 5,
  /** list_dir: entries shown before stopping. */
  listMaxEntries: 1000,
  /** glob: paths returned before stopping. */
  globMaxResults: 1000,
  /** grep: matching lines returned before stopping. */
  grepMaxMatches: 500,
  /** grep: characters of one matching line shown. */
  grepMaxLineChars: 500,
  /** grep: files larger than this are skipped. */
  grepMaxFileBytes: 8 * 1024 * 1024,
  /** grep: wall-clock bound on one search. */
  grepTimeoutMs: 30_000,
  /** write_file: largest content the model may write in one call. */
  writeMaxBytes: 8 * 1024 * 1024,
  /** apply_patch: longest patch text one call may send. */
  patchMaxChars: 8 * 1024 * 1024,
  /** apply_patch: most files one patch may name. */
  patchMaxFiles: 200,
  /** Diff kept in an outcome (for approvals and the UI); longer diffs are cut with a marker. */
  diffMaxChars: 256 * 1024,
  /**
   * Line steps one file's diff may take ((old + new lines) x edits, Myers' bound); a change needing more is
   * shown as one replaced block (diffText.ts). Runs before any approval, so it bounds how long it blocks.
   */
  diffMaxWork: 500_000,
  /**
   * apply_patch: work one patch's hunk search may take (lines and characters read, line comparisons); a
   * patch needing more is refused, nothing written. Runs before any approval, so it bounds how long it blocks.
   */
  patchSearchMaxWork: 64_000_000,
  /** run_command: default wall-clock timeout. */
  commandDefaultTimeoutMs: 120_000,
  /** run_command: the most a model may ask for. */
  commandMaxTimeoutMs: 600_000,
  /** run_command: memory cap per command. */
  commandMemoryMb: 2048,
  /** web_fetch (issue #32): bytes downloaded at most (the body is streamed and cut there, never held whole first). */
  webFetchMaxBytes: 10 * 1024 * 1024,
  /** web_fetch: default wall-clock limit of one call, redirects included. */
  webFetchDefaultTimeoutMs: 30_000,
  /** web_fetch: the most a model may ask for. */
  webFetchMaxTimeoutMs: 120_000,
  /** web_fetch: characters of the page the model gets; a longer page is kept whole as an artifact. */
  webFetchMaxChars: 100_000,
  /** web_fetch: redirects followed before giving up. */
  webFetchMaxRedirects: 5,
  /** todo: steps one plan may hold. */
  todoMaxItems: 50,
  /** todo: characters of one step's text (content or activeForm). */
  todoMaxChars: 500,
  /** A path that does not exist: near matches offered ("did you mean ...?"). */
  nearMatchesShown: 3,
  /** A path that does not exist: files and folders looked at for near matches, nearest levels first. */
  nearMatchMaxEntries: 20_000,
} as const;

/** Directories no listing, glob or grep descends into unless asked by path. */
export const ignoredDirNames: readonly string[] = ['.git', 'node_modules'];
