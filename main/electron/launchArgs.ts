import path from 'node:path';

/**
 * The project folder a launch was asked to open (`keel-app ~/code/project`), from a command line: the last
 * argument that is not a flag and names an existing folder, resolved against the launch's working directory.
 * `skip` drops the executable (and, unpackaged, the app path). Undefined when there is none.
 */
export function folderFromArgv(
  argv: readonly string[],
  options: { cwd: string; skip: number; isDirectory: (folder: string) => boolean },
): string | undefined {
  const candidates = argv.slice(options.skip).filter((arg) => arg !== '' && !arg.startsWith('-'));
  for (const arg of candidates.reverse()) {
    const folder = path.resolve(options.cwd, arg);
    if (options.isDirectory(folder)) return folder;
  }
  return undefined;
}
