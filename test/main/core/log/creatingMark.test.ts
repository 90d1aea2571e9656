import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertLogPresent, writeCreatingMark } from '../../../../main/core/log/creatingMark.js';
import { DamagedLogError, SessionNotFoundError } from '../../../../main/core/log/logErrors.js';

// Two processes racing getOrCreate: the loser can look at the winner's folder between its claim (mkdir)
// and its creating mark. That folder is a create in progress, not a session whose log was lost.
describe('assertLogPresent', () => {
  let dir: string;
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-mark-')), 'sess_1');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('says not found for no folder, an empty folder just claimed, and a marked create', () => {
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(SessionNotFoundError);
    fs.mkdirSync(dir);
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(SessionNotFoundError);
    writeCreatingMark(dir);
    fs.mkdirSync(path.join(dir, 'artifacts'));
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(SessionNotFoundError);
  });

  it('says damaged, naming the file, for a session folder that lost its log or holds an empty one', () => {
    fs.mkdirSync(path.join(dir, 'artifacts'), { recursive: true });
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(DamagedLogError);
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(/events\.sqlite.*the file is missing/);
    fs.writeFileSync(path.join(dir, 'events.sqlite'), '');
    expect(() => assertLogPresent(dir, 'sess_1')).toThrow(/the file is empty/);
    fs.writeFileSync(path.join(dir, 'events.sqlite'), 'x');
    expect(() => assertLogPresent(dir, 'sess_1')).not.toThrow();
  });
});
