import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CliError } from '../errors.js';

/*
 * keel eval's tasks: one JSON file per task (a prompt, a project folder, a check command), read from a folder
 * and checked with zod before anything runs, so a bad file is one line naming the file and the field.
 */

/** One task as written in its file. */
export const EvalTaskFile = z.strictObject({
  /** Defaults to the file name without `.json`. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64')
    .optional(),
  /** What the user asks the model, as `keel run` would get it. */
  prompt: z.string().trim().min(1, 'must not be empty'),
  /** The project folder the task starts from, relative to the task file (copied, never changed). */
  project: z.string().min(1, 'must not be empty'),
  /** A shell command run in the box in the project after the session; exit 0 means solved. */
  check: z.string().trim().min(1, 'must not be empty'),
  /** Model requests the session may make (default: --max-steps, else 30). */
  maxSteps: z.number().int().min(1).max(500).optional(),
  /** Wall-clock limit of the session in seconds (default: --timeout, else 600). */
  timeoutSeconds: z.number().int().min(1).max(86_400).optional(),
  /** A line for people reading the task. */
  description: z.string().optional(),
});

/** A task ready to run: its file, id and the project's real path. */
export type EvalTask = {
  id: string;
  file: string;
  prompt: string;
  projectDir: string;
  check: string;
  maxSteps?: number;
  timeoutSeconds?: number;
};

/**
 * The folder of the tasks that ship with Keel: `evals/tasks/` at the package root (next to `dist/`), found
 * from this module's own location, so the built CLI and the sources both find it.
 */
export function defaultTasksDir(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'evals', 'tasks');
    if (path.dirname(dir) === dir) throw new CliError('cannot find the package root holding evals/tasks');
  }
}

/** Field path and message of a zod issue: `prompt: must not be empty`, `maxSteps: expected number...`. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(the file)';
  if (issue.code === 'unrecognized_keys') return `${issue.keys.join(', ')}: not a task field`;
  return `${where}: ${issue.message}`;
}

/**
 * Every `*.json` task in `dir`, sorted by file name, validated; the first problem is a CliError (exit 2)
 * naming the file and the field. Ids must be unique and each project folder must exist.
 */
export function loadTasks(dir: string): EvalTask[] {
  const folder = path.resolve(dir);
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    throw new CliError(`--tasks ${dir}: not a folder`);
  }
  const files = fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new CliError(`${folder}: no task files (*.json) in this folder`);
  const tasks: EvalTask[] = [];
  for (const name of files) {
    const file = path.join(folder, name);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new CliError(
        `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const parsed = EvalTaskFile.safeParse(raw);
    if (!parsed.success) {
      throw new CliError(`${file}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
    }
    const task = parsed.data;
    const id = task.id ?? name.slice(0, -'.json'.length);
    if (tasks.some((other) => other.id === id))
      throw new CliError(`${file}: id: "${id}" is used by another task`);
    const projectDir = path.resolve(folder, task.project);
    if (!fs.existsSync(projectDir) || !fs.statSync(projectDir).isDirectory()) {
      throw new CliError(`${file}: project: ${projectDir} is not a folder`);
    }
    tasks.push({
      id,
      file,
      prompt: task.prompt,
      projectDir: fs.realpathSync(projectDir),
      check: task.check,
      ...(task.maxSteps !== undefined ? { maxSteps: task.maxSteps } : {}),
      ...(task.timeoutSeconds !== undefined ? { timeoutSeconds: task.timeoutSeconds } : {}),
    });
  }
  return tasks;
}
