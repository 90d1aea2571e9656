// Run by .ci/run around the tests (Linux /proc). Exits 1, listing them by command line, when processes started
// from the checkout are still alive: their working directory or an argument is inside it.
//   node .ci/leftover-processes.mjs --record FILE   before the tests: writes down what already runs
//   node .ci/leftover-processes.mjs [--except FILE] after them: checks the current directory's checkout
// Never counted: this process (it reads /proc itself, no ps or grep), its ancestors (the shell running .ci/run,
// whatever started it) and what FILE lists (e.g. a `tee` the CI pipes .ci/run into). Run it unpiped: a process
// its output went into would count.
import console from 'node:console';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long processes killed at the end of the tests get to finish dying before they count as left over. */
const GRACE_MS = 5_000;
const POLL_MS = 250;

const checkout = process.cwd();
const roots = [...new Set([path.resolve(checkout), fs.realpathSync(checkout)])];
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// A root as a whole path segment: /work/main or /work/main/x, never /work/main2.
const mentionsRoot = new RegExp(`(?:${roots.map(escape).join('|')})(?=$|[/\\s:'"=,])`);
const isInside = (dir) => roots.some((root) => dir === root || dir.startsWith(`${root}/`));

/** The fields of /proc/PID/stat after the command name (state, ppid, ...), or undefined once it is gone. */
function statOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Every process as `pid:starttime` (its start in clock ticks since boot), so a reused pid is a new key. */
function listProcesses() {
  const keys = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    const fields = /^\d+$/.test(entry) ? statOf(entry) : undefined;
    if (fields) keys.set(Number(entry), { key: `${entry}:${fields[19]}`, parent: Number(fields[1]) });
  }
  return keys;
}

/** The keys never counted: the recorded ones, and this process's own and its ancestors'. */
function excludedKeys(processes, recordFile) {
  const excluded = new Set(recordFile ? fs.readFileSync(recordFile, 'utf8').split('\n').filter(Boolean) : []);
  for (let pid = process.pid; processes.has(pid); pid = processes.get(pid).parent) {
    excluded.add(processes.get(pid).key);
  }
  return excluded;
}

/** Live processes (not zombies, not kernel threads) whose cwd or arguments are inside the checkout. */
function findLeftovers(excluded) {
  const found = [];
  for (const [pid, { key }] of listProcesses()) {
    if (excluded.has(key)) continue;
    let argv;
    let cwd = '';
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue; // gone meanwhile
    }
    if (argv.length === 0) continue; // a kernel thread, or a zombie
    try {
      cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // Not ours to read, or gone: judged by its arguments alone.
    }
    if (isInside(cwd) || argv.some((arg) => mentionsRoot.test(arg)))
      found.push({ pid, cwd, command: argv.join(' ') });
  }
  return found;
}

const [option, file] = process.argv.slice(2);
if (option === '--record' && file) {
  fs.writeFileSync(file, [...listProcesses().values()].map(({ key }) => `${key}\n`).join(''));
} else if (option === undefined || (option === '--except' && file)) {
  const excluded = excludedKeys(listProcesses(), file);
  const deadline = Date.now() + GRACE_MS;
  let leftovers = findLeftovers(excluded);
  while (leftovers.length > 0 && Date.now() < deadline) {
    await sleep(POLL_MS);
    leftovers = findLeftovers(excluded);
  }
  if (leftovers.length === 0) {
    console.log(`leftover processes: none started from ${checkout}`);
  } else {
    const count = `${leftovers.length} started from ${checkout}`;
    console.error(`leftover processes: ${count} still alive after ${GRACE_MS / 1000} s:`);
    for (const { pid, cwd, command } of leftovers)
      console.error(`  pid ${pid} (cwd ${cwd || '?'}): ${command}`);
    process.exitCode = 1;
  }
} else {
  console.error('usage: node .ci/leftover-processes.mjs [--record FILE | --except FILE]');
  process.exitCode = 2;
}
