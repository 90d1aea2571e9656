import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveHome } from '../../../main/store/home.js';

describe('resolveHome', () => {
  it('prefers --home over KEEL_HOME and the platform default', () => {
    expect(
      resolveHome({
        home: '/data/keel',
        env: { KEEL_HOME: '/elsewhere' },
        platform: 'linux',
        homedir: '/home/a',
      }),
    ).toBe('/data/keel');
  });

  it('makes a relative --home absolute', () => {
    expect(resolveHome({ home: 'rel/home', env: {} })).toBe(path.resolve('rel/home'));
  });

  it('uses KEEL_HOME when there is no --home', () => {
    expect(resolveHome({ env: { KEEL_HOME: '/srv/keel' }, platform: 'darwin', homedir: '/Users/a' })).toBe(
      '/srv/keel',
    );
  });

  it('ignores an empty KEEL_HOME', () => {
    expect(resolveHome({ env: { KEEL_HOME: '' }, platform: 'linux', homedir: '/home/a' })).toBe(
      '/home/a/.config/Keel',
    );
  });

  it('uses ~/.config/Keel on Linux', () => {
    expect(resolveHome({ env: {}, platform: 'linux', homedir: '/home/a' })).toBe('/home/a/.config/Keel');
  });

  it('uses $XDG_CONFIG_HOME/Keel on Linux when it is set and absolute', () => {
    expect(resolveHome({ env: { XDG_CONFIG_HOME: '/xdg' }, platform: 'linux', homedir: '/home/a' })).toBe(
      '/xdg/Keel',
    );
    expect(resolveHome({ env: { XDG_CONFIG_HOME: 'relative' }, platform: 'linux', homedir: '/home/a' })).toBe(
      '/home/a/.config/Keel',
    );
  });

  it('uses ~/Library/Application Support/Keel on macOS', () => {
    expect(resolveHome({ env: {}, platform: 'darwin', homedir: '/Users/a' })).toBe(
      '/Users/a/Library/Application Support/Keel',
    );
  });

  it('uses %APPDATA%\\Keel on Windows', () => {
    expect(
      resolveHome({
        env: { APPDATA: 'C:\\Users\\a\\AppData\\Roaming' },
        platform: 'win32',
        homedir: 'C:\\Users\\a',
      }),
    ).toBe('C:\\Users\\a\\AppData\\Roaming\\Keel');
  });

  it('falls back to the roaming profile on Windows when APPDATA is unset', () => {
    expect(resolveHome({ env: {}, platform: 'win32', homedir: 'C:\\Users\\a' })).toBe(
      'C:\\Users\\a\\AppData\\Roaming\\Keel',
    );
  });
});
