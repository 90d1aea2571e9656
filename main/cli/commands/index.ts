import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Adds one subcommand to the program. A new command is a new file here plus one entry below. */
export type RegisterCommand = (program: Command, context: CliContext) => void;

/** A module of this folder: the subcommands it registers, and its register function, imported when asked. */
export type CommandModule = { names: readonly string[]; load: () => Promise<RegisterCommand> };

/*
 * Every `keel` subcommand, in the order `keel --help` lists them, by the module that registers it. A module
 * is imported only when its command runs (or for the whole list: help, an unknown command), so `keel sessions`
 * does not load what `keel run` or `keel eval` need. `names` must be what the module registers
 * (test/main/cli/startup.test.ts checks it).
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['run'], load: async () => (await import('./run.js')).registerRun },
  { names: ['commit', 'discard'], load: async () => (await import('./commit.js')).registerCommit },
  { names: ['rewind', 'fork', 'revert'], load: async () => (await import('./revert.js')).registerRevert },
  { names: ['snapshots'], load: async () => (await import('./snapshots.js')).registerSnapshots },
  { names: ['resume'], load: async () => (await import('./resume.js')).registerResume },
  { names: ['approve', 'deny'], load: async () => (await import('./approve.js')).registerApproval },
  { names: ['grants', 'revoke'], load: async () => (await import('./grants.js')).registerGrants },
  { names: ['stop'], load: async () => (await import('./stop.js')).registerStop },
  { names: ['model', 'policy'], load: async () => (await import('./model.js')).registerModel },
  { names: ['reasoning'], load: async () => (await import('./reasoning.js')).registerReasoning },
  { names: ['models'], load: async () => (await import('./models.js')).registerModels },
  { names: ['trace'], load: async () => (await import('./trace.js')).registerTrace },
  // #31
  { names: ['budget', 'cost'], load: async () => (await import('./budget.js')).registerBudget },
  { names: ['sessions'], load: async () => (await import('./sessions.js')).registerSessions },
  { names: ['show'], load: async () => (await import('./show.js')).registerShow },
  { names: ['payload'], load: async () => (await import('./payload.js')).registerPayload },
  { names: ['compact', 'compactions'], load: async () => (await import('./compact.js')).registerCompact },
  { names: ['eval'], load: async () => (await import('./eval.js')).registerEval },
  { names: ['export'], load: async () => (await import('./export.js')).registerExport },
  { names: ['import'], load: async () => (await import('./import.js')).registerImport },
  { names: ['mcp'], load: async () => (await import('./mcp.js')).registerMcp },
  // Issue 30: the setup a user brings (trust of a project's files, permission rules).
  { names: ['trust', 'rules'], load: async () => (await import('./setup.js')).registerSetup },
  // Issue 30: plan mode (keel run --plan presents a plan; keel plan approves it or sends it back).
  { names: ['plan'], load: async () => (await import('./plan.js')).registerPlan },
  { names: ['serve'], load: async () => (await import('./serve.js')).registerServe },
  // Issue 33: Keel as an Agent Client Protocol agent for editors.
  { names: ['acp'], load: async () => (await import('./acp.js')).registerAcp },
  // Issue 36: reclaiming idle sessions' checkouts.
  { names: ['gc'], load: async () => (await import('./gc.js')).registerGc },
];

/** Every subcommand's register function, in `keel --help` order. */
export function loadAllCommands(): Promise<RegisterCommand[]> {
  return Promise.all(COMMAND_MODULES.map((module) => module.load()));
}

/**
 * The register functions `argv` needs: the one module of the subcommand it names, or all of them when it
 * names none that exists (`keel`, `keel --help`, `keel help run`, a misspelt command: the help and the
 * "did you mean" suggestions list every command). Only the global `--home DIR` may come before the name.
 */
export async function commandsFor(argv: readonly string[]): Promise<RegisterCommand[]> {
  let name: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--home') i += 1;
    else if (arg.startsWith('--home=')) continue;
    else {
      if (!arg.startsWith('-')) name = arg;
      break;
    }
  }
  const module = COMMAND_MODULES.find((candidate) => name !== undefined && candidate.names.includes(name));
  return module ? [await module.load()] : loadAllCommands();
}
