import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { homeHookMounts } from '../../../../main/core/hooks/homeScripts.js';
import { writeUnder } from '../../../support/setupFiles.js';

// Issue #30: what of the user's home a user's hook sees in its box: its own scripts, read-only, nothing else.

let dir: string;
let home: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-home-scripts-')));
  home = path.join(dir, 'home');
  writeUnder(home, '.claude/hooks/fmt.sh', 'true\n');
  writeUnder(home, 'bin/notify.sh', 'true\n');
  writeUnder(home, '.config/Keel/settings.json', '{}');
  writeUnder(dir, 'outside.sh', 'true\n');
  fs.symlinkSync(path.join(dir, 'outside.sh'), path.join(home, 'bin/link.sh'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const hook = (command: string, scope: 'user' | 'project' = 'user') => ({
  scope,
  folder: path.join(home, '.claude'),
  root: home,
  command,
});

describe('a user hook’s home scripts', () => {
  it('its file’s hooks/ folder and the home files its command names, in every spelling; HOME is the home', () => {
    const mounts = homeHookMounts(hook('sh ~/bin/notify.sh "$HOME/bin/notify.sh" ${HOME}/nope.sh'), []);
    expect(mounts).toEqual({
      readOnly: [path.join(home, '.claude/hooks'), path.join(home, 'bin/notify.sh')],
      homeVariable: home,
    });
  });

  it('never a folder, a link out of the home, a file in Keel’s home, or anything for a project’s hook', () => {
    const keelHome = path.join(home, '.config/Keel');
    const mounts = homeHookMounts(
      hook(`cat ~/bin; sh ~/bin/link.sh; cat ${keelHome}/settings.json; sh ../outside.sh`),
      [keelHome],
    );
    expect(mounts?.readOnly).toEqual([path.join(home, '.claude/hooks')]);
    expect(homeHookMounts(hook('sh ~/bin/notify.sh', 'project'), [])).toBeUndefined();
  });
});
