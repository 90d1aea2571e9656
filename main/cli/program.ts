import { Command, CommanderError } from 'commander';
import { describeError } from './errors.js';
import { ExitCode } from './exitCodes.js';
import { createContext } from './context.js';
import type { CliIo } from './context.js';
import { commandsFor } from './commands/index.js';
import type { RegisterCommand } from './commands/index.js';
import { onIndexNotice, stopBackgroundCommands, sweepDeadScratch } from '../core/harness/start.js';

/** Builds the `keel` program: global options, then the subcommands `commands` register (commands/). */
export function createProgram(
  io: CliIo,
  commands: readonly RegisterCommand[],
): ReturnType<typeof createContext> & { program: Command } {
  // Read when a command first asks for the home, i.e. after the options were parsed.
  const context = createContext(io, () => program.opts<{ home?: string }>().home);
  const program = new Command('keel')
    .description(
      'Keel: durable sessions for coding agents. Run turns in a sandbox, approve, stop, resume, inspect and export them.',
    )
    .option('--home <dir>', 'the Keel home folder (default: $KEEL_HOME, else the app-data folder)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`keel: ${formatCommanderMessage(text)}\n`),
    })
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 failure (provider, locked session, corrupt database, I/O), 2 bad input (flag, argument, file, unknown session), 3 a turn waits on an approval, 130 stopped (Ctrl-C, keel stop).\nSet KEEL_DEBUG=1 to see stack traces.',
    );
  for (const register of commands) register(program, context);
  return Object.assign(context, { program });
}

/**
 * Runs `keel` with `argv` (the arguments after the program name) and returns the exit code.
 * Never throws and never prints a stack trace unless KEEL_DEBUG=1. Without `commands`, only the module of the
 * subcommand argv names is loaded (every module for help or an unknown command: `commandsFor`).
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  commands?: readonly RegisterCommand[],
): Promise<number> {
  const context = createProgram(io, commands ?? (await commandsFor(argv)));
  // A damaged index moved aside, a rebuild's progress: one line each, on stderr.
  const previousNotice = onIndexNotice((line) => io.stderr(`keel: ${line}\n`));
  try {
    // Every start ends what runs of killed Keels left (a session that is never resumed included).
    await sweepDeadScratch();
    await context.program.parseAsync([...argv], { from: 'user' });
    return context.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed its message (or the help) through configureOutput.
      if (error.exitCode === 0) return ExitCode.ok;
      return ExitCode.usage;
    }
    let home: string | undefined;
    try {
      home = context.home();
    } catch {
      home = undefined;
    }
    const report = describeError(error, home, argv);
    io.stderr(`keel: ${report.message}\n`);
    for (const detail of report.details) io.stderr(`  ${detail}\n`);
    if (io.env.KEEL_DEBUG === '1' && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return report.exitCode;
  } finally {
    onIndexNotice(previousNotice);
    // Background commands end with the command that started them (issue #32): their ptys would keep keel alive.
    await stopBackgroundCommands();
  }
}

/** Commander's "error: …\n(Did you mean …?)" as one line without the "error:" prefix. */
function formatCommanderMessage(text: string): string {
  return text
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}
