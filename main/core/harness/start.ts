/*
 * What every host needs when it starts, light to load (the CLI's program and context import it on every
 * command, not the door's index): the home, what killed Keels left behind, the index's notices, where a
 * session's files are.
 */
export { resolveHome, sweepDeadScratch } from '../hostStart.js';
export { onIndexNotice } from '../log/indexNotice.js';
export { eventsFile, sessionDir } from '../paths.js';
export { stopBackgroundCommands } from '../../runner/backgroundEnd.js';
