import { describe, expect, it } from 'vitest';
import { outsidePrefix } from '../../../../main/core/approvals/commandFlags.js';
import { sedScriptProblem } from '../../../../main/core/approvals/sedScript.js';
import { commandMatchesPrefix, prefixGrantGap } from '../../../../main/core/approvals/grants.js';
import { shellWords } from '../../../../main/core/approvals/shellWords.js';

// [prefix, command]: the grant covers the command.
const covered: [string, string][] = [
  ['find', 'find . -name "*.ts" -type f'],
  ['find', 'find src -maxdepth 2 -print'],
  ['find .', 'find . -newer x -print0'],
  ['find . -delete', 'find . -delete'],
  ['sed', "sed -n 's/a/b/p' file.txt"],
  ['sed', "sed 's/[/]/x/g' f"],
  ['sed', "sed -e 's/x/y/' -e 5d f"],
  ['sed', "sed '1,/end/p' f"],
  ['sed', "sed 'r other.txt' f"],
  ['sed -i', "sed -i 's/a/b/' f"],
  ['sed -i', "sed -i -E 's/a+/b/' f"],
  ['git', 'git status --short'],
  ['git', 'git log --oneline -5'],
  ['git', 'git -P diff HEAD~1'],
  ['git', 'git commit -m "a message"'],
  ['git', 'git rebase main'],
  ['git config', 'git config user.name x'],
  ['git status', 'git status'],
  ['git -c color.ui=never', 'git -c color.ui=never log'],
  ['perl -e 1', 'perl -e 1 x.pl'],
  ['npm', 'npm ls --depth 0'],
  ['npm', 'npm view react version'],
  ['npm test', 'npm test -- --watch=false'],
  ['npm run build', 'npm run build --silent'],
  ['npx tsc', 'npx tsc --noEmit'],
  ['xargs', 'xargs'],
  ['xargs -0 grep', 'xargs -0 grep -l foo'],
  ['env', 'env'],
  ['timeout 5 ls', 'timeout 5 ls -la'],
  ['nice -n 5 find', 'nice -n 5 find . -name x'],
  ['bash', 'bash scripts/check.sh'],
  ['bash -c "npm test"', 'bash -c "npm test"'],
  ['python3', 'python3 script.py --flag'],
  ['python3 -m pytest', 'python3 -m pytest -x'],
  ['node', 'node dist/cli.js --help'],
  ['perl', 'perl -n script.pl'],
  ['awk', "awk '{print NR}' f"],
  ['tar', 'tar -xzf a.tgz'],
  ['ls', 'ls -exec'],
];

// [prefix, command, a word of the reason].
const outside: [string, string, string][] = [
  ['find', 'find . -exec rm {} +', '-exec'],
  ['find', 'find . -execdir sh {} +', '-execdir'],
  ['find', 'find . -ok rm {} +', '-ok'],
  ['find', 'find . -okdir rm {} +', '-okdir'],
  ['find', 'find . -delete', '-delete'],
  ['find', 'find . -fprint out', '-fprint'],
  ['find', 'find . -fprint0 out', '-fprint0'],
  ['find', 'find . -fprintf out %p', '-fprintf'],
  ['find', 'find . -fls out', '-fls'],
  ['find', "find . '-exec' rm {} +", '-exec'],
  ['find', 'find . -e"xec" rm {} +', '-exec'],
  ['find', 'find . -ex?c rm {} +', 'expand'],
  ['find', 'find . * rm', 'expand'],
  ['find', 'find . -{exec,x} rm', 'expand'],
  ['find .', 'find . -delete', '-delete'],
  ['/usr/bin/find', '/usr/bin/find . -delete', '-delete'],
  ['sed', "sed -i 's/a/b/' f", 'in place'],
  ['sed', "sed -ni 's/a/b/' f", 'in place'],
  ['sed', "sed 's/a/b/' f -i", 'in place'],
  ['sed', "sed --in-place 's/a/b/' f", 'in place'],
  ['sed', "sed --in 's/a/b/' f", 'in place'],
  ['sed', 'sed -f script.sed f', 'from a file'],
  ['sed', "sed 's/x/touch y/e' f", 'e flag'],
  ['sed', "sed '1e touch y' f", 'e command'],
  ['sed', "sed 'w out' f", 'w command'],
  ['sed', "sed -n '/x/W out' f", 'W command'],
  ['sed', "sed 's/a/b/w out' f", 'w flag'],
  ['sed', "sed -e 's/a/b/' -e '2e id' f", 'e command'],
  ['sed', 'sed -es/a/b/e f', 'e flag'],
  ['sed', "sed '{e id' f", 'e command'],
  ['sed -i', "sed -i 's/a/b/e' f", 'e flag'],
  ['git', 'git -c core.pager=id log', '-c'],
  ['git', 'git -C sub status', '-C'],
  ['git', 'git --exec-path=/tmp status', 'exec-path'],
  ['git', 'git --git-dir=evil status', 'git-dir'],
  ['git', 'git --work-tree=/ status', 'work-tree'],
  ['git', 'git --config-env=core.pager=X log', 'config-env'],
  ['git', 'git config core.fsmonitor x', 'configuration'],
  ['git', 'git st', 'alias'],
  ['git', 'git submodule foreach id', 'foreach'],
  ['git', 'git rebase -x id main', 'runs a command'],
  ['git', 'git rebase --exec id main', 'runs a command'],
  ['git', 'git rebase --ex=id main', 'runs a command'],
  ['git', 'git bisect run make', 'bisect run'],
  ['git', 'git grep -O foo', 'pager'],
  ['git', 'git clone --upload-pack=x a b', 'runs a command'],
  ['git', 'git clone -c core.fsmonitor=x a b', 'configuration'],
  ['git', 'git init --template=t sub', 'hooks'],
  ['git', 'git diff --ext-diff', 'external diff'],
  ['git', 'git difftool', 'diff program'],
  ['npm', 'npm exec evil', 'runs a package'],
  ['npm', 'npm x evil', 'runs a package'],
  ['npm', 'npm run build', 'scripts'],
  ['npm', 'npm test', 'scripts'],
  ['npm', 'npm install', 'install'],
  ['npm', 'npm --loglevel view exec evil', 'runs a package'],
  ['npm', 'npm config set script-shell x', 'configuration'],
  ['npm test', 'npm test --script-shell=./evil', 'shell'],
  ['npm test', 'npm test --script-sh ./evil', 'shell'],
  ['npm test', 'npm test --node-options=--require=x', 'node'],
  ['npx', 'npx evil', 'does not name'],
  ['npx', 'npx -p evil tsc', 'package'],
  ['xargs', 'xargs rm', 'does not name'],
  ['xargs', 'xargs -0 rm', 'does not name'],
  ['xargs', 'xargs -I{} rm {}', 'does not name'],
  ['xargs find', 'xargs find', 'input'],
  ['env', 'env rm -rf x', 'does not name'],
  ['env', 'env LD_PRELOAD=x ls', 'LD_PRELOAD'],
  ['env', 'env -S "rm x"', 'splits'],
  ['env find', 'env find . -delete', '-delete'],
  ['timeout 5', 'timeout 5 rm x', 'does not name'],
  ['nice', 'nice rm x', 'does not name'],
  ['nice -n 5 find', 'nice -n 5 find . -delete', '-delete'],
  ['command', 'command rm x', 'does not name'],
  ['eval', 'eval rm x', 'shell code'],
  ['sh', "sh -c 'rm x'", '-c'],
  ['bash', "bash -ec 'rm x'", '-c'],
  ['bash', "bash -o posix -c 'rm x'", '-c'],
  ['bash', 'bash --rcfile evil', 'startup'],
  ['bash -c', "bash -c 'rm x'", '-c'],
  ['perl', "perl -e 'unlink q{x}'", 'code'],
  ['perl', "perl -pi -e 's/a/b/' f", 'in place'],
  ['perl', 'perl -Mevil x.pl', 'loads code'],
  ['python3', "python3 -c 'import os'", 'code'],
  ['python3', "python3 -Bc 'import os'", 'code'],
  ['node', "node -e 'x'", 'code'],
  ['node', "node -pe 'x'", 'code'],
  ['node', 'node --require ./evil app.js', 'loads code'],
  ['node', 'node --eval=x', 'code'],
  ['ruby', "ruby -e 'x'", 'code'],
  ['awk', 'awk -f prog.awk f', 'program from a file'],
  ['tar', 'tar -xf a.tar --to-command=sh', 'runs a command'],
  ['tar', 'tar -I evil -xf a.tar', 'program'],
  // An option the prefix names, with a value it does not: the value could be anything.
  ['git -c', 'git -c core.pager=evil log', 'value of -c'],
  ['git -c color.ui=never', 'git -c color.ui=never config core.fsmonitor x', 'configuration'],
  ['git --git-dir', 'git --git-dir evil status', 'value of --git-dir'],
  ['perl -e', "perl -e 'unlink q{x}'", 'value of -e'],
  ['python3 -c', "python3 -c 'import os'", 'value of -c'],
  ['node --eval', "node --eval 'x'", 'value of --eval'],
  ['sed -f', 'sed -f evil.sed f', 'value of -f'],
];

describe('prefix grants and the flags outside them', () => {
  it.each(covered)('"%s" covers: %s', (prefix, command) => {
    expect(outsidePrefix(command, prefix)).toBeUndefined();
    expect(commandMatchesPrefix(command, prefix)).toBe(true);
  });

  it.each(outside)('"%s" does not cover: %s', (prefix, command, why) => {
    const reason = outsidePrefix(command, prefix);
    expect(reason).toBeDefined();
    expect(reason).toContain(why);
    expect(commandMatchesPrefix(command, prefix)).toBe(false);
  });

  it('a compound command never matches, so no simple command of it escapes the check', () => {
    for (const command of [
      'find . -name x && find . -delete',
      'find . ; find . -delete',
      'find . | xargs rm',
      'find $(echo -delete)',
      'find . -name x\nfind . -delete',
      'find . `echo -delete`',
    ]) {
      expect(commandMatchesPrefix(command, 'find')).toBe(false);
    }
  });

  it('says why a prefix grant that starts a command does not cover it', () => {
    const grants = [{ seq: 2, requestSeq: 1, tool: 'run_command', scope: 'prefix:find' as const }];
    expect(prefixGrantGap('find . -delete', grants)).toBe(
      `the grant for "find" does not cover this: find's -delete deletes what it finds`,
    );
    expect(prefixGrantGap('ls', grants)).toBeUndefined();
    expect(prefixGrantGap('find .', grants)).toBeUndefined();
  });

  it('reads words as bash does: quotes removed, globs and braces marked, an open quote refused', () => {
    expect(shellWords(`a 'b c' d"e"f {} g* {x,y} # h`)).toEqual([
      { text: 'a', expands: false },
      { text: 'b c', expands: false },
      { text: 'def', expands: false },
      { text: '{}', expands: false },
      { text: 'g*', expands: true },
      { text: '{x,y}', expands: true },
    ]);
    expect(shellWords("a 'b")).toBeUndefined();
    expect(shellWords("'*'")).toEqual([{ text: '*', expands: false }]);
  });

  it('reads sed scripts command by command', () => {
    expect(sedScriptProblem('s/e/w/g')).toBeUndefined();
    expect(sedScriptProblem('s|[|]|x|2')).toBeUndefined();
    expect(sedScriptProblem('/begin/,/end/ { p }')).toBeUndefined();
    expect(sedScriptProblem('$p')).toContain('Keel does not read');
    expect(sedScriptProblem('s/a/b')).toContain('cut short');
  });
});
