/**
 * One file of a user's setup as the loader hands it over (main/core/setup reads the user's home and the
 * project, and gives project files only once their hash is approved). The parsers here are pure functions
 * of it: what a file means never depends on where it was read or when.
 */
export type CustomFile = {
  /** `user`: the home's (trusted); `project`: the project folder's, passed on only when approved. */
  scope: 'user' | 'project';
  /** Whose layout: `.claude/`, the shared `.agents/`, Keel's own `.keel/`. */
  layout: 'claude' | 'agents' | 'keel';
  /** The path as people see it: `~/.claude/commands/review.md`, `.agents/skills/release/SKILL.md`. */
  shown: string;
  /** The path inside the kind's folder, `/`-separated: `review.md`, `frontend/component.md`, `release/SKILL.md`. */
  relative: string;
  /** Absolute path on disk (a skill's folder is its directory). */
  absolute: string;
  text: string;
  /** sha256 (hex) of the file's bytes. */
  sha256: string;
  /** A skill's other files, approved with its SKILL.md: path inside the skill's folder, absolute path, hash. */
  resources?: { relative: string; absolute: string; sha256: string; size: number }[];
};

/** A file that could not be read as its format says: named with its line and ignored whole. */
export type CustomProblem = { path: string; line: number; message: string };

/** Where one definition came from, as events and views name it. */
export type CustomOrigin = Pick<CustomFile, 'scope' | 'layout' | 'shown' | 'sha256'>;

export function originOf(file: CustomFile): CustomOrigin {
  return { scope: file.scope, layout: file.layout, shown: file.shown, sha256: file.sha256 };
}

/** Precedence among files defining the same name: the user's own first (a project never shadows them), then `.keel/`, `.claude/`, `.agents/`. */
export function precedence(file: Pick<CustomFile, 'scope' | 'layout'>): number {
  return (file.scope === 'user' ? 0 : 10) + ['keel', 'claude', 'agents'].indexOf(file.layout);
}

/** A parser's answer for one file: the definition, or the problem that makes the whole file ignored. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: CustomProblem };

/** The problem of `file` at `line` (1-based). */
export function problemAt(
  file: CustomFile,
  line: number,
  message: string,
): { ok: false; problem: CustomProblem } {
  return { ok: false, problem: { path: file.shown, line, message } };
}

/**
 * Every valid definition by name, the first by `precedence` winning, sorted by name so what the model is told
 * is byte-stable whatever order the files were read in; and every file's problem.
 */
export function catalogueOf<T extends { name: string }>(
  files: readonly CustomFile[],
  parse: (file: CustomFile) => Parsed<T>,
): { items: T[]; problems: CustomProblem[] } {
  const problems: CustomProblem[] = [];
  const byName = new Map<string, { item: T; rank: number }>();
  for (const file of files) {
    const parsed = parse(file);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    const rank = precedence(file);
    const known = byName.get(parsed.value.name);
    if (!known || rank < known.rank) byName.set(parsed.value.name, { item: parsed.value, rank });
  }
  const items = [...byName.values()].map((entry) => entry.item).sort((a, b) => (a.name < b.name ? -1 : 1));
  return { items, problems };
}
