import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerExport } from './export.js';
import { registerImport } from './import.js';
import { registerPayload } from './payload.js';
import { registerSessions } from './sessions.js';
import { registerShow } from './show.js';
import { registerRun } from './run.js';
import { registerResume } from './resume.js';
import { registerApproval } from './approve.js';
import { registerStop } from './stop.js';
import { registerModel } from './model.js';
import { registerModels } from './models.js';
import { registerReasoning } from './reasoning.js';
import { registerTrace } from './trace.js';
import { registerGrants } from './grants.js';
import { registerServe } from './serve.js';
import { registerCommit } from './commit.js';
import { registerRevert } from './revert.js';
import { registerSnapshots } from './snapshots.js';
import { registerCompact } from './compact.js';
import { registerEval } from './eval.js';
import { registerMcp } from './mcp.js';

/** Adds one subcommand to the program. A new command is a new file here plus one entry below. */
export type RegisterCommand = (program: Command, context: CliContext) => void;

/** Every `keel` subcommand, in the order `keel --help` lists them. */
export const registerCommands: readonly RegisterCommand[] = [
  registerRun,
  registerCommit,
  registerRevert,
  registerSnapshots,
  registerResume,
  registerApproval,
  registerGrants,
  registerStop,
  registerModel,
  registerReasoning,
  registerModels,
  registerTrace,
  registerSessions,
  registerShow,
  registerPayload,
  registerCompact,
  registerEval,
  registerExport,
  registerImport,
  registerMcp,
  registerServe,
];
