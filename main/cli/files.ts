import fs from 'node:fs';
import path from 'node:path';
import { CliError, errorCode } from './errors.js';
import { ExitCode } from './exitCodes.js';

/** Reads a UTF-8 input file; a missing, unreadable or folder path is a usage error saying which. */
export function readInputFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${describeFileError(error)}`, ExitCode.usage);
  }
}

/**
 * Writes a file through `fill` atomically: into a temporary file beside it, renamed over the target
 * only when complete, so a failed export never leaves half a file behind.
 */
export function writeFileAtomically(file: string, fill: (write: (chunk: string) => void) => void): void {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  let fd: number;
  try {
    fd = fs.openSync(temporary, 'w');
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${describeFileError(error)}`, ExitCode.usage);
  }
  let open = true;
  try {
    fill((chunk) => fs.writeSync(fd, chunk));
    fs.fsyncSync(fd);
    open = false;
    fs.closeSync(fd);
    try {
      fs.renameSync(temporary, file);
    } catch (error) {
      throw new CliError(`cannot write ${file}: ${describeFileError(error)}`, ExitCode.usage);
    }
  } catch (error) {
    if (open) fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

function describeFileError(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'no such file or folder';
    case 'EISDIR':
      return 'it is a folder, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
