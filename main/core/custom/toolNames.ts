/**
 * The tool names of Claude Code (`allowed-tools`, an agent's `tools`), mapped onto Keel's tools. Keel's own
 * names (and `mcp__server__tool`) stand for themselves. A `Bash(git diff:*)` rule names the tool `Bash`:
 * the parenthesised pattern is a permission rule (main/core/setup's grammar), not a tool of its own.
 */
const CLAUDE_TOOLS = new Map<string, readonly string[]>(
  Object.entries({
    Read: ['read_file'],
    Write: ['write_file'],
    Edit: ['edit_file', 'apply_patch'],
    MultiEdit: ['edit_file', 'apply_patch'],
    Glob: ['glob'],
    Grep: ['grep'],
    LS: ['list_dir'],
    Bash: ['run_command'],
    TodoWrite: ['todo'],
    Task: ['spawn_subagent'],
    Skill: ['load_skill'],
    WebFetch: ['web_fetch'],
  }),
);

/** Splits a tools field: a YAML list, or a string separated by commas (Claude Code) or spaces (Agent Skills). */
export function splitToolList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item));
  const items = Array.isArray(value) ? value.map(text) : (text(value).match(/[^\s,(]+(\([^)]*\))?/g) ?? []);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

/** Keel's tool names for a list as written (order kept, duplicates dropped), and the entries Keel has no tool for. */
export function keelToolNames(written: readonly string[]): { tools: string[]; unknown: string[] } {
  const tools: string[] = [];
  const unknown: string[] = [];
  for (const entry of written) {
    const name = entry.replace(/\(.*\)$/, '');
    const mapped = CLAUDE_TOOLS.get(name) ?? (/^[a-z][a-z0-9_]*$|^mcp__/.test(name) ? [name] : undefined);
    if (mapped === undefined) unknown.push(entry);
    for (const tool of mapped ?? []) if (!tools.includes(tool)) tools.push(tool);
  }
  return { tools, unknown };
}

/**
 * The Claude Code names a Keel tool goes by (a hook's `matcher`, its `tool_name`): `run_command` is `Bash`,
 * `write_file` is `Write`; apply_patch, which edits and creates files, is `Edit`, `MultiEdit` and `Write`. Keel's
 * own name comes last, so a matcher may name either; an MCP tool (`mcp__server__tool`) is its own name.
 */
export function claudeToolNames(keelName: string): string[] {
  const names: string[] = [];
  for (const [claude, keel] of CLAUDE_TOOLS) if (keel.includes(keelName)) names.push(claude);
  if (keelName === 'apply_patch') names.push('Write');
  names.push(keelName);
  return names;
}
