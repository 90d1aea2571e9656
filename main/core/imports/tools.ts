import path from 'node:path';
import { isRecord } from './jsonl.js';

/*
 * Another tool's call as Keel's, where the meaning is the same: the name Keel's registry knows and its
 * arguments in Keel's shape (paths relative to the project root, as Keel's tools take them). A call whose
 * arguments say more than Keel's tool can (a Grep with output flags, a Glob outside the project) or a tool
 * Keel has no twin of (WebFetch, MCP tools, …) is kept as it was: its name and its arguments unchanged.
 */

export type MappedCall = { name: string; arguments: string };

const kept = (name: string, input: unknown): MappedCall => ({
  name,
  arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}),
});

/** A path as Keel's tools take it: relative to the project when it is inside it, else as it was. */
export function projectPath(file: string, project: string | undefined): string {
  if (project === undefined || !path.isAbsolute(file)) return file;
  const relative = path.relative(project, file);
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return file;
  return relative.split(path.sep).join('/');
}

const str = (value: unknown): value is string => typeof value === 'string' && value !== '';
const int = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value > 0;

/** Only these keys (and at least the required ones) may be present for the call to map. */
function only(input: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(input).every((key) => allowed.includes(key));
}

/** A Claude Code tool_use as Keel's call. */
export function mapClaudeCall(name: string, input: unknown, project: string | undefined): MappedCall {
  if (!isRecord(input)) return kept(name, input);
  const at = (file: unknown) => projectPath(String(file), project);
  switch (name) {
    case 'Bash':
      if (!str(input['command']) || !only(input, ['command', 'description', 'timeout'])) break;
      return {
        name: 'run_command',
        arguments: JSON.stringify({
          command: input['command'],
          ...(int(input['timeout']) ? { timeout_ms: input['timeout'] } : {}),
        }),
      };
    case 'Read':
      if (!str(input['file_path']) || !only(input, ['file_path', 'offset', 'limit'])) break;
      return {
        name: 'read_file',
        arguments: JSON.stringify({
          path: at(input['file_path']),
          ...(int(input['offset']) ? { offset: input['offset'] } : {}),
          ...(int(input['limit']) ? { limit: input['limit'] } : {}),
        }),
      };
    case 'Write':
      if (
        !str(input['file_path']) ||
        typeof input['content'] !== 'string' ||
        !only(input, ['file_path', 'content'])
      )
        break;
      return {
        name: 'write_file',
        arguments: JSON.stringify({ path: at(input['file_path']), content: input['content'] }),
      };
    case 'Edit':
      if (
        !str(input['file_path']) ||
        !str(input['old_string']) ||
        typeof input['new_string'] !== 'string' ||
        !only(input, ['file_path', 'old_string', 'new_string', 'replace_all'])
      )
        break;
      return {
        name: 'edit_file',
        arguments: JSON.stringify({
          path: at(input['file_path']),
          old_string: input['old_string'],
          new_string: input['new_string'],
          ...(input['replace_all'] === true ? { replace_all: true } : {}),
        }),
      };
    case 'LS':
      if (!str(input['path']) || !only(input, ['path'])) break;
      return { name: 'list_dir', arguments: JSON.stringify({ path: at(input['path']) }) };
    case 'Glob': {
      if (!str(input['pattern']) || !only(input, ['pattern', 'path'])) break;
      const base = input['path'] === undefined ? '.' : at(input['path']);
      if (path.isAbsolute(base)) break;
      const pattern = base === '.' ? input['pattern'] : `${base}/${input['pattern']}`;
      return { name: 'glob', arguments: JSON.stringify({ pattern }) };
    }
    case 'Grep':
      if (!str(input['pattern']) || !only(input, ['pattern', 'path', 'glob'])) break;
      return {
        name: 'grep',
        arguments: JSON.stringify({
          pattern: input['pattern'],
          ...(str(input['path']) ? { path: at(input['path']) } : {}),
          ...(str(input['glob']) ? { glob: input['glob'] } : {}),
        }),
      };
    case 'TodoWrite': {
      const todos = input['todos'];
      if (!Array.isArray(todos)) break;
      const steps = todos.flatMap((todo) =>
        isRecord(todo) &&
        str(todo['content']) &&
        ['pending', 'in_progress', 'completed'].includes(String(todo['status']))
          ? [
              {
                content: todo['content'],
                status: todo['status'],
                ...(str(todo['activeForm']) ? { activeForm: todo['activeForm'] } : {}),
              },
            ]
          : [],
      );
      if (steps.length !== todos.length) break;
      return { name: 'todo', arguments: JSON.stringify({ todos: steps }) };
    }
    case 'Task':
      if (!str(input['prompt'])) break;
      return { name: 'spawn_subagent', arguments: JSON.stringify({ task: input['prompt'] }) };
    default:
      break;
  }
  return kept(name, input);
}

/** A shell argv as one command line: `bash -lc SCRIPT` is the script; else each word quoted where needed. */
export function commandLine(argv: readonly string[]): string {
  if (argv.length === 3 && /^(ba|z)?sh$/.test(path.basename(argv[0] ?? '')) && /^-l?c$/.test(argv[1] ?? '')) {
    return argv[2] ?? '';
  }
  return argv
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}

/** A Codex function call (or custom / local shell call) as Keel's call. */
export function mapCodexCall(name: string, args: string, project: string | undefined): MappedCall {
  let input: unknown;
  try {
    input = JSON.parse(args);
  } catch {
    // apply_patch as a custom (freeform) tool: its input is the patch text itself.
    if (name === 'apply_patch' && args.includes('*** Begin Patch')) {
      return { name: 'apply_patch', arguments: JSON.stringify({ input: args }) };
    }
    return { name, arguments: args };
  }
  if (!isRecord(input)) return { name, arguments: args };
  const cwd = (dir: unknown) => (str(dir) ? projectPath(dir, project) : undefined);
  const shell = (command: string, dir: unknown, timeout: unknown): MappedCall => {
    const folder = cwd(dir);
    return {
      name: 'run_command',
      arguments: JSON.stringify({
        command,
        ...(folder !== undefined && folder !== '.' ? { cwd: folder } : {}),
        ...(int(timeout) ? { timeout_ms: timeout } : {}),
      }),
    };
  };
  switch (name) {
    case 'shell':
    case 'container.exec':
    case 'local_shell': {
      const command = input['command'];
      if (
        !Array.isArray(command) ||
        !command.every((word) => typeof word === 'string') ||
        command.length === 0
      )
        break;
      if (!only(input, ['command', 'workdir', 'timeout_ms', 'working_directory', 'timeout'])) break;
      return shell(
        commandLine(command),
        input['workdir'] ?? input['working_directory'],
        input['timeout_ms'] ?? input['timeout'],
      );
    }
    case 'shell_command':
    case 'exec_command': {
      const command = input['command'] ?? input['cmd'];
      if (!str(command) || !only(input, ['command', 'cmd', 'workdir', 'timeout_ms', 'yield_time_ms'])) break;
      return shell(command, input['workdir'], input['timeout_ms']);
    }
    case 'apply_patch':
      if (!str(input['input']) || !only(input, ['input'])) break;
      return { name: 'apply_patch', arguments: JSON.stringify({ input: input['input'] }) };
    case 'update_plan': {
      const plan = input['plan'];
      if (!Array.isArray(plan)) break;
      const steps = plan.flatMap((step) =>
        isRecord(step) &&
        str(step['step']) &&
        ['pending', 'in_progress', 'completed'].includes(String(step['status']))
          ? [{ content: step['step'], status: step['status'] }]
          : [],
      );
      if (steps.length !== plan.length) break;
      return { name: 'todo', arguments: JSON.stringify({ todos: steps }) };
    }
    default:
      break;
  }
  return { name, arguments: args };
}
