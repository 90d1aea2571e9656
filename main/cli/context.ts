import { systemClock, type Clock } from '../common/clock.js';
import { resolveHome } from '../core/harness/start.js';

/** The process's streams and environment as the CLI sees them; tests and `keel serve` can swap them. */
export type CliIo = {
  /** Writes to standard output; called with whole lines. */
  stdout: (text: string) => void;
  /** Writes to standard error; called with whole lines. */
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** True when standard error is a terminal (a progress line is redrawn in place there). */
  stderrIsTTY?: boolean;
  /** Reads all of standard input (for `keel import -`). */
  readStdin: () => Promise<string>;
};

/** What every command gets: the I/O, the resolved home, and a way to report a non-zero outcome. */
export type CliContext = {
  io: CliIo;
  /** The Keel home: `--home`, else KEEL_HOME, else the platform's app-data folder. */
  home: () => string;
  /** Sets the exit code for an outcome that is not an error (e.g. a turn stopped on an approval). */
  setExitCode: (code: number) => void;
  /** The clock model lifecycle is judged by. */
  clock: Clock;
};

/** Builds a context whose home is read from the parsed global options when first asked for. */
export function createContext(
  io: CliIo,
  globalHome: () => string | undefined,
  clock: Clock = systemClock,
): CliContext & { exitCode: number } {
  const context = {
    io,
    clock,
    exitCode: 0,
    home: () => {
      const home = globalHome();
      return resolveHome(home === undefined ? { env: io.env } : { home, env: io.env });
    },
    setExitCode: (code: number) => {
      context.exitCode = code;
    },
  };
  return context;
}
