import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  APP_ENTRY_URL,
  APP_ORIGIN,
  APP_SCHEME_PRIVILEGES,
  decideNavigation,
  denyPermissionCheck,
  denyPermissionRequest,
  externalLinkDialog,
  isAppUrl,
  isTrustedSender,
  OPEN_EXTERNAL_BUTTON,
  RENDERER_CSP,
  SECURE_WEB_PREFERENCES,
} from '../../../main/electron/security.js';
import { REPO_ROOT } from '../../support/cli.js';

/** The object literal passed as webPreferences to `new BrowserWindow(...)` in main/electron/index.ts. */
function webPreferencesInIndex(): Record<string, unknown> {
  const file = path.join(REPO_ROOT, 'main/electron/index.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Record<string, unknown>[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isNewExpression(node) && node.expression.getText() === 'BrowserWindow') {
      const options = node.arguments?.[0];
      if (!options || !ts.isObjectLiteralExpression(options))
        throw new Error('BrowserWindow options are not a literal');
      for (const property of options.properties) {
        if (!ts.isPropertyAssignment(property) || property.name.getText() !== 'webPreferences') continue;
        if (!ts.isObjectLiteralExpression(property.initializer))
          throw new Error('webPreferences is not a literal');
        const values: Record<string, unknown> = {};
        for (const entry of property.initializer.properties) {
          if (!ts.isPropertyAssignment(entry))
            throw new Error(`unexpected ${entry.getText()} in webPreferences`);
          const value = entry.initializer;
          values[entry.name.getText()] =
            value.kind === ts.SyntaxKind.TrueKeyword
              ? true
              : value.kind === ts.SyntaxKind.FalseKeyword
                ? false
                : ts.isStringLiteral(value)
                  ? value.text
                  : `<${value.getText()}>`;
        }
        found.push(values);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (found.length !== 1)
    throw new Error(`expected one BrowserWindow with webPreferences, found ${found.length}`);
  return found[0] as Record<string, unknown>;
}

describe('window security settings', () => {
  it('are exactly: isolated, sandboxed, no Node, no webviews, no insecure content, no middle-click', () => {
    expect(SECURE_WEB_PREFERENCES).toStrictEqual({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      disableBlinkFeatures: 'Auxclick',
    });
  });

  it('are what index.ts actually passes to new BrowserWindow (plus the bundled preload)', () => {
    expect(webPreferencesInIndex()).toStrictEqual({
      preload: "<path.join(import.meta.dirname, '../preload/index.cjs')>",
      ...SECURE_WEB_PREFERENCES,
    });
  });

  it('register keel:// as a secure standard scheme with no bypasses', () => {
    expect(APP_SCHEME_PRIVILEGES).toStrictEqual([
      {
        scheme: 'keel',
        privileges: {
          standard: true,
          secure: true,
          supportFetchAPI: true,
          codeCache: true,
          allowServiceWorkers: false,
          bypassCSP: false,
          corsEnabled: false,
          stream: false,
        },
      },
    ]);
    expect(APP_ENTRY_URL).toBe('keel://app/index.html');
  });

  it('serve a strict CSP whose only allowance is inline styles (Monaco)', () => {
    expect(RENDERER_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        "font-src 'self' data:; connect-src 'self'; worker-src 'self'; manifest-src 'self'; base-uri 'none'; " +
        "form-action 'none'; frame-ancestors 'none'; frame-src 'none'; object-src 'none'",
    );
    expect(RENDERER_CSP).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|\*/);
  });
});

describe('IPC sender check', () => {
  const top = (url: string) => ({ url, parent: null });
  it('accepts only the top frame of an app page', () => {
    expect(isTrustedSender(top(APP_ENTRY_URL))).toBe(true);
    expect(isTrustedSender(top(`${APP_ORIGIN}/settings#x`))).toBe(true);
    expect(isTrustedSender({ url: APP_ENTRY_URL, parent: top(APP_ENTRY_URL) })).toBe(false);
    expect(isTrustedSender(top('keel://other/index.html'))).toBe(false);
    expect(isTrustedSender(top('https://evil.example/'))).toBe(false);
    expect(isTrustedSender(top('file:///app/out/renderer/index.html'))).toBe(false);
    expect(isTrustedSender(top('about:blank'))).toBe(false);
    expect(isTrustedSender(top('not a url'))).toBe(false);
    expect(isTrustedSender(null)).toBe(false);
    expect(isTrustedSender(undefined)).toBe(false);
  });

  it('accepts the dev server only when one is configured (unpackaged development)', () => {
    const dev = { devServerUrl: 'http://localhost:5173' };
    expect(isTrustedSender(top('http://localhost:5173/'))).toBe(false);
    expect(isTrustedSender(top('http://localhost:5173/'), dev)).toBe(true);
    expect(isTrustedSender(top('http://localhost:5174/'), dev)).toBe(false);
    expect(isAppUrl('http://localhost:5173/x', dev)).toBe(true);
  });
});

describe('navigation, new windows and external links', () => {
  it('never navigates; offers only https: links (without credentials) to the browser', () => {
    expect(decideNavigation('https://example.com/docs?q=1')).toEqual({
      allow: false,
      openExternal: 'https://example.com/docs?q=1',
    });
    for (const url of [
      'http://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'keel://app/index.html',
      'data:text/html,hi',
      'smb://host/share',
      'https://user:pass@example.com/',
      'garbage',
    ]) {
      expect(decideNavigation(url)).toEqual({ allow: false });
    }
  });

  it('asks before opening, with Cancel as the default', () => {
    const options = externalLinkDialog('https://example.com/');
    expect(options).toMatchObject({
      type: 'question',
      defaultId: 0,
      cancelId: 0,
      detail: 'https://example.com/',
    });
    expect(options.buttons?.[OPEN_EXTERNAL_BUTTON]).toBe('Open in Browser');
  });

  it('denies every permission request and check but notifications (issue #32)', () => {
    const granted: boolean[] = [];
    denyPermissionRequest({}, 'notifications', (answer) => granted.push(answer));
    expect(granted).toEqual([true]);
    expect(denyPermissionCheck({}, 'notifications')).toBe(true);
    for (const permission of ['media', 'geolocation', 'clipboard-read', 'openExternal', 'fileSystem']) {
      const answers: boolean[] = [];
      denyPermissionRequest({}, permission, (granted) => answers.push(granted));
      expect(answers).toEqual([false]);
    }
    expect(denyPermissionCheck()).toBe(false);
  });
});
