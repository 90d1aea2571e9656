// What a prefix grant does not cover: a command's own ways of running another command or writing where the
// grant did not say (find -exec, sed -i, git -c, npm exec, sh -c...). One table, by program name; words the
// grant's prefix names are approved, every word after it is read as the program reads it. Pure.
import { scanOptions, type OptionSpec } from './commandOptions.js';
import { sedScriptProblem } from './sedScript.js';
import { shellWords, type ShellWord } from './shellWords.js';

/** Why the words at `approved` or after step outside a grant for the first `approved` words; else undefined. */
type Rule = (words: readonly ShellWord[], approved: number) => string | undefined;

const RUNS = 'runs a command';
const WRITES = 'writes a file';

/** find: primaries that run a command, delete, or write a file (matched whole: find has no bundles). */
const FIND_PRIMARIES: Readonly<Record<string, string>> = {
  '-exec': RUNS,
  '-execdir': RUNS,
  '-ok': RUNS,
  '-okdir': RUNS,
  '-delete': 'deletes what it finds',
  '-fprint': WRITES,
  '-fprint0': WRITES,
  '-fprintf': WRITES,
  '-fls': WRITES,
};

const findRule: Rule = (words, approved) => {
  for (let index = Math.max(1, approved); index < words.length; index += 1) {
    const word = words[index] as ShellWord;
    const why = FIND_PRIMARIES[word.text];
    if (why !== undefined) return `find's ${word.text} ${why}`;
    if (word.expands && /^[-*?[{]/.test(word.text)) {
      return `the shell may expand ${word.text} into a primary such as -exec (a file can be named so)`;
    }
  }
  return undefined;
};

/** Reads a program's options with `spec`; an option outside the grant is named with the program. */
const optionsRule =
  (
    program: string,
    spec: OptionSpec,
    then?: (words: readonly ShellWord[], approved: number) => string | undefined,
  ): Rule =>
  (words, approved) => {
    const scanned = scanOptions(words, 1, approved, spec);
    if (scanned.outside !== undefined) return `${program}: ${scanned.outside}`;
    return then?.(words, approved);
  };

const SED: OptionSpec = {
  outsideShort: { i: 'edits files in place', f: 'reads its script from a file' },
  outsideLong: { 'in-place': 'edits files in place', file: 'reads its script from a file' },
  shortFlags: 'nrEsuz',
  shortValue: 'elf',
  shortOptionalValue: 'i',
  longFlags: [
    'quiet',
    'silent',
    'regexp-extended',
    'separate',
    'unbuffered',
    'null-data',
    'zero-terminated',
    'posix',
    'sandbox',
    'debug',
    'follow-symlinks',
    'binary',
    'help',
    'version',
  ],
  longValue: ['expression', 'line-length', 'file'],
};

/** sed: -i and -f are outside; so is a script (-e or the first operand) with an `e`, `w` or `W` in it. */
const sedRule: Rule = (words, approved) => {
  const scanned = scanOptions(words, 1, approved, SED);
  if (scanned.outside !== undefined) return `sed: ${scanned.outside}`;
  const scripts = scanned.values.filter((value) => value.option === 'e' || value.option === 'expression');
  const first = scanned.operands[0];
  if (scripts.length === 0 && first !== undefined) {
    const word = words[first] as ShellWord;
    scripts.push({ option: '', text: word.text, index: first, expands: word.expands });
  }
  for (const script of scripts) {
    if (script.index < approved) continue;
    if (script.expands) return `sed: the shell may expand its script ${script.text}`;
    const why = sedScriptProblem(script.text);
    if (why !== undefined) return `sed: ${why}`;
  }
  return undefined;
};

/** A program that runs another: where the command it runs starts, and whether it adds words of its own. */
type RunnerSpec = OptionSpec & {
  /** Operands before the command it runs (timeout's duration, chroot's folder, flock's lock file). */
  operandsBefore?: number;
  /** `NAME=value` words before the command (env): outside unless the prefix names them. */
  assignments?: boolean;
  /** It appends words of its own to the command (xargs: its input), words the grant cannot see. */
  addsWords?: boolean;
};

/**
 * A runner (xargs, env, nice, timeout, npx...): the grant covers the command it runs only when its prefix
 * names that command; the command is then checked by its own rule. With nothing to run, nothing is run.
 */
const runnerRule =
  (program: string, spec: RunnerSpec): Rule =>
  (words, approved) => {
    const scanned = scanOptions(words, 1, approved, { ...spec, stopAtOperand: true });
    if (scanned.outside !== undefined) return `${program}: ${scanned.outside}`;
    let start = scanned.operands[0];
    if (start === undefined) return undefined;
    start += spec.operandsBefore ?? 0;
    if (spec.assignments === true) {
      while (start < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test((words[start] as ShellWord).text)) {
        if (start >= approved)
          return `${program} sets ${(words[start] as ShellWord).text.split('=')[0]} for the command it runs`;
        start += 1;
      }
    }
    const nested = words[start];
    if (nested === undefined) return undefined;
    if (start >= approved) return `${program} runs ${nested.text}, and the grant does not name it`;
    const name = programName(nested.text);
    if (spec.addsWords === true && RULES[name] !== undefined) {
      return `${program} adds words from its input to ${name}, which the grant cannot check`;
    }
    return outsideOf(words.slice(start), approved - start);
  };

/** A shell: `-c` runs the text after it, which must then lie inside the prefix; a script file runs as granted. */
const shellRule =
  (program: string): Rule =>
  (words, approved) => {
    const scanned = scanOptions(words, 1, approved, {
      outsideLong: { rcfile: 'runs a startup file', 'init-file': 'runs a startup file' },
      shortValue: 'oO',
      lenient: true,
      stopAtOperand: true,
    });
    if (scanned.outside !== undefined) return `${program}: ${scanned.outside}`;
    const withCode = words
      .slice(1, scanned.operands[0] ?? words.length)
      .some((word) => /^-[a-zA-Z]*c/.test(word.text));
    const code = scanned.operands[0];
    if (withCode && code !== undefined && code >= approved) {
      return `${program} -c runs the text after it, and the grant does not name it`;
    }
    return undefined;
  };

/** An interpreter: code on the command line (and in-place edits, preloaded modules) is outside. */
const interpreterRule = (program: string, spec: OptionSpec): Rule =>
  optionsRule(program, { ...spec, lenient: true, stopAtOperand: true });

const CODE = 'runs code given on the command line';
const MODULE = 'loads code before the program';

const GIT_GLOBAL: OptionSpec = {
  outsideShort: {
    C: 'runs git in another folder (its hooks and configuration)',
    c: 'sets configuration for the run (a pager, an fsmonitor, an alias: each a command)',
  },
  outsideLong: {
    'exec-path': 'runs git programs from another folder',
    'git-dir': 'uses another repository (its hooks and configuration)',
    'work-tree': 'works on another folder',
    'config-env': 'sets configuration for the run',
    'super-prefix': 'is internal to git',
  },
  shortFlags: 'pPhv',
  shortValue: 'Cc',
  longFlags: [
    'paginate',
    'no-pager',
    'no-replace-objects',
    'bare',
    'literal-pathspecs',
    'glob-pathspecs',
    'noglob-pathspecs',
    'icase-pathspecs',
    'no-optional-locks',
    'no-advice',
    'version',
    'help',
    'html-path',
    'man-path',
    'info-path',
  ],
  longValue: ['namespace', 'list-cmds', 'attr-source', 'git-dir', 'work-tree', 'config-env', 'super-prefix'],
  stopAtOperand: true,
};

/** Git subcommands outside a grant that does not name them, with why. */
const GIT_OUTSIDE: Readonly<Record<string, string>> = {
  config: 'writes git configuration (aliases, hooks path, fsmonitor: commands git runs later)',
  submodule: 'runs commands (foreach) and clones',
  'filter-branch': 'runs the commands it is given',
  difftool: 'runs a diff program',
  mergetool: 'runs a merge program',
  instaweb: 'starts a web server and a browser',
  daemon: 'starts a server',
  'send-email': 'sends mail (and runs the commands its options name)',
  credential: 'reads and stores credentials',
  'web--browse': 'starts a browser',
};

/** Git's own commands a grant for `git` covers (anything else may be an alias, which runs what it names). */
const GIT_KNOWN = new Set(
  (
    'add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap ' +
    'checkout cherry cherry-pick clean clone commit commit-tree count-objects describe diff diff-files ' +
    'diff-index diff-tree fetch for-each-ref format-patch fsck gc grep hash-object help init log ls-files ' +
    'ls-remote ls-tree merge merge-base merge-file mv name-rev notes pull push range-diff read-tree rebase ' +
    'reflog remote repack replace reset restore rev-list rev-parse revert rm shortlog show show-branch ' +
    'show-ref sparse-checkout stash status switch symbolic-ref tag update-index update-ref var verify-commit ' +
    'verify-tag version whatchanged worktree write-tree'
  ).split(' '),
);

/** Options of one git subcommand outside the grant (git accepts unique abbreviations of long names). */
const GIT_SUB_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  rebase: { outsideShort: { x: RUNS }, outsideLong: { exec: RUNS } },
  bisect: {},
  grep: {
    outsideShort: { O: 'opens files in a pager program' },
    outsideLong: { 'open-files-in-pager': RUNS },
  },
  clone: {
    outsideShort: { u: RUNS, c: 'sets configuration in the new repository' },
    outsideLong: {
      'upload-pack': RUNS,
      config: 'sets configuration in the new repository',
      template: 'installs hooks',
    },
  },
  init: { outsideLong: { template: 'installs hooks' } },
  fetch: { outsideLong: { 'upload-pack': RUNS } },
  pull: { outsideLong: { 'upload-pack': RUNS } },
  'ls-remote': { outsideShort: { u: RUNS }, outsideLong: { 'upload-pack': RUNS } },
  push: { outsideLong: { 'receive-pack': RUNS, exec: RUNS } },
  archive: { outsideLong: { exec: RUNS, remote: 'runs git on a remote', output: WRITES } },
  diff: { outsideLong: { 'ext-diff': 'runs an external diff program', output: WRITES } },
  log: { outsideLong: { 'ext-diff': 'runs an external diff program', output: WRITES } },
  show: { outsideLong: { 'ext-diff': 'runs an external diff program', output: WRITES } },
  help: { outsideShort: { w: 'starts a browser' }, outsideLong: { web: 'starts a browser' } },
};

const gitRule: Rule = (words, approved) => {
  const scanned = scanOptions(words, 1, approved, GIT_GLOBAL);
  if (scanned.outside !== undefined) return `git: ${scanned.outside}`;
  const at = scanned.operands[0];
  if (at === undefined) return undefined;
  const sub = (words[at] as ShellWord).text;
  if (at >= approved) {
    const why = GIT_OUTSIDE[sub];
    if (why !== undefined) return `git ${sub} ${why}`;
    if (!GIT_KNOWN.has(sub))
      return `git ${sub} is not a git command Keel knows (an alias runs what it names)`;
  }
  if (sub === 'bisect' && words[at + 1]?.text === 'run' && at + 1 >= approved)
    return `git bisect run ${RUNS}`;
  const spec = GIT_SUB_OPTIONS[sub];
  if (spec === undefined) return undefined;
  const options = scanOptions(words, at + 1, approved, { ...spec, lenient: true });
  return options.outside === undefined ? undefined : `git ${sub}: ${options.outside}`;
};

/** npm commands that run scripts, packages or a shell, or write npm's configuration. */
const NPM_OUTSIDE: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ['exec x', 'runs a package'],
    ['explore', 'runs a shell in a package'],
    ['init create innit', 'runs a package (create-...)'],
    ['run run-script rum urn test tst t start stop restart', "runs the project's scripts"],
    [
      'install i in ins inst insta instal isnt isntall add ci clean-install ic install-clean isntall-clean ' +
        'install-test it install-ci-test cit update up upgrade udpate rebuild rb link ln pack publish dedupe ' +
        'prune',
      'runs install or lifecycle scripts',
    ],
    ['config c set', "writes npm's configuration (script-shell, node-options: commands)"],
    ['edit', 'runs an editor'],
  ].flatMap(([names, why]) => (names as string).split(' ').map((name) => [name, why as string])),
);

const NPM_OPTIONS: OptionSpec = {
  outsideShort: { c: CODE },
  outsideLong: {
    call: CODE,
    'script-shell': 'sets the shell scripts run in',
    'node-options': 'sets options (--require) of every node it starts',
    userconfig: 'reads another configuration',
    globalconfig: 'reads another configuration',
    'init-module': RUNS,
    editor: RUNS,
    shell: RUNS,
    browser: RUNS,
    git: 'sets the git program it runs',
  },
  lenient: true,
};

/** npm: any operand (before `--`) naming a command that runs something is outside unless the prefix names it. */
const npmRule: Rule = (words, approved) => {
  const scanned = scanOptions(words, 1, approved, NPM_OPTIONS);
  if (scanned.outside !== undefined) return `npm: ${scanned.outside}`;
  // npm's options may take the next word as their value, so any operand could be the command npm runs.
  const dashes = words.findIndex((word, index) => index > 0 && word.text === '--');
  for (const index of scanned.operands) {
    if (index < approved || (dashes >= 0 && index > dashes)) continue;
    const text = (words[index] as ShellWord).text;
    const why = NPM_OUTSIDE[text];
    if (why !== undefined) return `npm ${text} ${why}`;
  }
  return undefined;
};

const XARGS: RunnerSpec = {
  shortFlags: '0oprtx',
  shortValue: 'adEILnPs',
  shortOptionalValue: 'eil',
  longFlags: [
    'null',
    'open-tty',
    'interactive',
    'no-run-if-empty',
    'verbose',
    'exit',
    'show-limits',
    'help',
    'version',
  ],
  longValue: ['arg-file', 'delimiter', 'max-lines', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
  addsWords: true,
};

/** Programs by name (the last part of the command's first word). */
const RULES: Readonly<Record<string, Rule>> = {
  find: findRule,
  sed: sedRule,
  git: gitRule,
  npm: npmRule,
  npx: runnerRule('npx', {
    outsideShort: { c: CODE, p: 'installs and runs another package' },
    outsideLong: { call: CODE, package: 'installs and runs another package' },
    lenient: true,
  }),
  xargs: runnerRule('xargs', XARGS),
  env: runnerRule('env', {
    outsideShort: { S: 'splits a text into a command' },
    outsideLong: { 'split-string': 'splits a text into a command' },
    shortFlags: 'i0v',
    shortValue: 'uC',
    longFlags: [
      'ignore-environment',
      'null',
      'debug',
      'help',
      'version',
      'default-signal',
      'ignore-signal',
      'block-signal',
      'list-signal-handling',
    ],
    longValue: ['unset', 'chdir'],
    assignments: true,
  }),
  nice: runnerRule('nice', { shortValue: 'n', longValue: ['adjustment'] }),
  nohup: runnerRule('nohup', {}),
  setsid: runnerRule('setsid', { shortFlags: 'cfw', longFlags: ['ctty', 'fork', 'wait'] }),
  timeout: runnerRule('timeout', {
    shortFlags: 'v',
    shortValue: 'sk',
    longFlags: ['preserve-status', 'foreground', 'verbose'],
    longValue: ['signal', 'kill-after'],
    operandsBefore: 1,
  }),
  stdbuf: runnerRule('stdbuf', { shortValue: 'ioe', longValue: ['input', 'output', 'error'] }),
  time: runnerRule('time', {
    outsideShort: { o: WRITES },
    outsideLong: { output: WRITES },
    shortFlags: 'pavq',
    shortValue: 'f',
    longFlags: ['portability', 'append', 'verbose', 'quiet'],
    longValue: ['format'],
  }),
  command: runnerRule('command', { shortFlags: 'pvV' }),
  builtin: runnerRule('builtin', {}),
  exec: runnerRule('exec', { shortFlags: 'cl', shortValue: 'a' }),
  sudo: runnerRule('sudo', { lenient: true, shortValue: 'ugCDhpRrtTU' }),
  doas: runnerRule('doas', { shortFlags: 'ns', shortValue: 'uC' }),
  flock: runnerRule('flock', {
    lenient: true,
    outsideShort: { c: RUNS },
    outsideLong: { command: RUNS },
    shortValue: 'wE',
    operandsBefore: 1,
  }),
  ionice: runnerRule('ionice', { shortFlags: 't', shortValue: 'cnp' }),
  chroot: runnerRule('chroot', { lenient: true, operandsBefore: 1 }),
  watch: runnerRule('watch', { lenient: true, shortValue: 'dnq' }),
  strace: runnerRule('strace', { lenient: true, outsideShort: { o: WRITES }, shortValue: 'abeEIOpPsSuUX' }),
  eval: (words, approved) => (words.length > approved ? 'eval runs its words as shell code' : undefined),
  sh: shellRule('sh'),
  bash: shellRule('bash'),
  dash: shellRule('dash'),
  zsh: shellRule('zsh'),
  ksh: shellRule('ksh'),
  ash: shellRule('ash'),
  perl: interpreterRule('perl', {
    outsideShort: { e: CODE, E: CODE, i: 'edits files in place', M: MODULE, m: MODULE, d: MODULE, x: CODE },
    shortValue: 'eE',
    shortOptionalValue: 'I0lCFiMmdx',
  }),
  python: interpreterRule('python', { outsideShort: { c: CODE }, shortValue: 'cmWX' }),
  python3: interpreterRule('python3', { outsideShort: { c: CODE }, shortValue: 'cmWX' }),
  node: interpreterRule('node', {
    outsideShort: { e: CODE, p: CODE, r: MODULE },
    outsideLong: {
      eval: CODE,
      print: CODE,
      require: MODULE,
      import: MODULE,
      loader: MODULE,
      'experimental-loader': MODULE,
      'env-file': 'sets NODE_OPTIONS and other variables from a file',
    },
    shortValue: 'epr',
    longValue: ['eval', 'print', 'require', 'import', 'loader', 'experimental-loader', 'env-file'],
  }),
  ruby: interpreterRule('ruby', {
    outsideShort: { e: CODE, i: 'edits files in place', r: MODULE, x: CODE },
    shortValue: 'er',
    shortOptionalValue: 'CIEFKTW0ix',
  }),
  awk: optionsRule('awk', AWK()),
  gawk: optionsRule('gawk', AWK()),
  mawk: optionsRule('mawk', AWK()),
  tar: optionsRule('tar', {
    outsideShort: { I: 'compresses through a program it names', F: 'runs a script at each volume' },
    outsideLong: {
      'to-command': RUNS,
      'use-compress-program': RUNS,
      'checkpoint-action': RUNS,
      'info-script': RUNS,
      'new-volume-script': RUNS,
      'rsh-command': RUNS,
      'rmt-command': RUNS,
    },
    lenient: true,
  }),
};

function AWK(): OptionSpec {
  return {
    outsideShort: {
      f: 'reads its program from a file',
      E: 'reads its program from a file',
      i: MODULE,
      l: MODULE,
    },
    outsideLong: {
      file: 'reads its program from a file',
      exec: 'reads its program from a file',
      include: MODULE,
      load: MODULE,
    },
    shortValue: 'vFfEil',
    longValue: ['file', 'exec', 'include', 'load'],
    lenient: true,
  };
}

/** The program a command's first word names: its last path part (`/usr/bin/find` is find). */
function programName(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** Why `words` (their first `approved` named by a grant) step outside it, by the rule of their program. */
function outsideOf(words: readonly ShellWord[], approved: number): string | undefined {
  const first = words[0];
  if (first === undefined) return undefined;
  const rule = RULES[programName(first.text)];
  return rule?.(words, approved);
}

/**
 * Why `command` (plain words: the shell-control rule already held) does more than a grant for `prefix`
 * covers, or undefined when the grant covers it: the prefix's words are approved as written; after them, a
 * program's own ways to run a command or write elsewhere (its row in RULES) are outside. Pure.
 */
export function outsidePrefix(command: string, prefix: string): string | undefined {
  const words = shellWords(command);
  const granted = shellWords(prefix);
  if (words === undefined || granted === undefined) return 'a quote is not closed';
  if (granted.length === 0 || granted.length > words.length)
    return 'the command does not start with the prefix';
  for (let index = 0; index < granted.length; index += 1) {
    if ((words[index] as ShellWord).text !== (granted[index] as ShellWord).text) {
      return 'the command does not start with the prefix';
    }
  }
  return outsideOf(words, granted.length);
}

/** The programs with a row in the table (for the README and tests). */
export const PROGRAMS_WITH_RULES: readonly string[] = Object.keys(RULES);
