import { describe, expect, it } from 'vitest';

// The renderer is compiled by tsconfig.web.json, not the Node project these tests type-check in: the module
// is loaded at run time and described here by the shape these tests rely on.
type ScopeInput = { ok: true; scope: string } | { ok: false; error: string };
type Press = { key: string; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean; altKey: boolean };
type ScopesModule = {
  editablePart: (suggested: string | undefined) => string;
  buildScope: (kind: 'path' | 'prefix', text: string) => ScopeInput;
  describeScope: (tool: string, scope: string) => string;
  shortcutDecision: (press: Press) => 'once' | 'session' | 'deny' | undefined;
  shortcutLabels: (platform: string) => Record<'once' | 'session' | 'deny', string>;
};
const modulePath = '../../renderer/src/screens/approvals/scopes.js';
const scopes = (await import(/* @vite-ignore */ modulePath)) as ScopesModule;

const press = (key: string, mods: Partial<Press> = {}): Press => ({
  key,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  altKey: false,
  ...mods,
});

describe('approval scopes', () => {
  it('pre-fills the editable part of a suggested scope', () => {
    expect(scopes.editablePart('path:src/**')).toBe('src/**');
    expect(scopes.editablePart('prefix:npm test')).toBe('npm test');
    expect(scopes.editablePart(undefined)).toBe('');
  });

  it('builds path and prefix scopes from what was typed, accepting a typed kind', () => {
    expect(scopes.buildScope('path', '  src/** ')).toEqual({ ok: true, scope: 'path:src/**' });
    expect(scopes.buildScope('path', 'path:lib/*.ts')).toEqual({ ok: true, scope: 'path:lib/*.ts' });
    expect(scopes.buildScope('prefix', 'npm test')).toEqual({ ok: true, scope: 'prefix:npm test' });
    // The session's own areas, as the tools show their paths.
    expect(scopes.buildScope('path', '/session/uploads/**')).toEqual({
      ok: true,
      scope: 'path:/session/uploads/**',
    });
    expect(scopes.buildScope('path', '/persistent/docs/*.md')).toEqual({
      ok: true,
      scope: 'path:/persistent/docs/*.md',
    });
  });

  it('refuses globs that are empty, absolute, leave the workspace or match everything', () => {
    for (const text of [
      '',
      '   ',
      '/etc/**',
      '/sessions/**',
      '/persistent/**',
      '/session/../x',
      'C:\\src\\**',
      '../other/**',
      'src/../../x',
      '**',
      'a\nb',
    ]) {
      const built = scopes.buildScope('path', text);
      expect(built.ok, text).toBe(false);
    }
    const empty = scopes.buildScope('prefix', '');
    expect(empty.ok).toBe(false);
    expect(!empty.ok && empty.error).toContain('npm test');
  });

  it('says which calls each scope would pre-authorise', () => {
    expect(scopes.describeScope('edit_file', 'once')).toBe('Only this edit_file call.');
    expect(scopes.describeScope('write_file', 'session')).toContain('Every write_file call in this session');
    expect(scopes.describeScope('web_fetch', 'domain:docs.example.org')).toBe(
      'Every web_fetch call to the host docs.example.org in this session, until revoked.',
    );
    expect(scopes.editablePart('domain:docs.example.org')).toBe('docs.example.org');
    expect(scopes.describeScope('edit_file', 'path:src/**')).toContain(
      'matching src/** (protected paths still ask)',
    );
    expect(scopes.describeScope('run_command', 'prefix:npm test')).toContain(
      '"npm test" followed by plain arguments',
    );
  });

  it('maps Ctrl/Cmd+Enter, Ctrl/Cmd+Shift+Enter and Ctrl/Cmd+Backspace to decisions, and nothing else', () => {
    expect(scopes.shortcutDecision(press('Enter', { ctrlKey: true }))).toBe('once');
    expect(scopes.shortcutDecision(press('Enter', { metaKey: true }))).toBe('once');
    expect(scopes.shortcutDecision(press('Enter', { ctrlKey: true, shiftKey: true }))).toBe('session');
    expect(scopes.shortcutDecision(press('Backspace', { ctrlKey: true }))).toBe('deny');
    expect(scopes.shortcutDecision(press('Enter'))).toBeUndefined();
    expect(scopes.shortcutDecision(press('Backspace'))).toBeUndefined();
    expect(scopes.shortcutDecision(press('Enter', { ctrlKey: true, altKey: true }))).toBeUndefined();
    expect(scopes.shortcutDecision(press('Backspace', { ctrlKey: true, shiftKey: true }))).toBeUndefined();
    expect(scopes.shortcutDecision(press('a', { ctrlKey: true }))).toBeUndefined();
  });

  it('writes the shortcuts the way the platform does', () => {
    expect(scopes.shortcutLabels('MacIntel').once).toBe('⌘+Enter');
    expect(scopes.shortcutLabels('linux').deny).toBe('Ctrl+Backspace');
  });
});
