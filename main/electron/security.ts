import type { CustomScheme, MessageBoxOptions, WebPreferences } from 'electron';
import { buildContentSecurityPolicy } from '../ipc/csp.js';

/**
 * Every security decision of the desktop shell as plain data and pure functions, so each is unit-tested
 * exactly (Electron itself cannot run on the build machines). index.ts only wires them to Electron.
 */

/** The renderer's custom scheme: pages load from keel://app/..., never file://. */
export const APP_SCHEME = 'keel';
/** The host of every renderer URL. */
export const APP_HOST = 'app';
/** The renderer's origin; IPC is accepted only from a top frame of this origin. */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
/** The page the window opens. */
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/**
 * keel:// is a standard, secure origin (so 'self', fetch and storage work like https) with nothing extra:
 * no CORS bypass, no service workers, no CSP bypass.
 */
export const APP_SCHEME_PRIVILEGES: readonly CustomScheme[] = [
  {
    scheme: APP_SCHEME,
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
];

/** The CSP of every keel:// response: the shared policy, connections only back to the app itself. */
export const RENDERER_CSP = buildContentSecurityPolicy();

/**
 * webPreferences of every window, besides the preload path: isolated, sandboxed, no Node anywhere, no
 * webviews, no insecure content, no middle-click navigation. index.ts spells the same object out literally in
 * its `new BrowserWindow(...)` (so electronegativity can read it); a test checks that the two are identical.
 */
export const SECURE_WEB_PREFERENCES = {
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
} as const satisfies WebPreferences;

/** Where the renderer may come from: keel://app, plus the electron-vite dev server while developing. */
export type RendererOrigins = { devServerUrl?: string | undefined };

function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    // Custom standard schemes report origin "null" in Node's URL; compare scheme + host instead.
    return parsed.protocol === `${APP_SCHEME}:` ? `${APP_SCHEME}://${parsed.host}` : parsed.origin;
  } catch {
    return undefined;
  }
}

/** True when `url` is a page of the app (keel://app/..., or the dev server in development). */
export function isAppUrl(url: string, origins: RendererOrigins = {}): boolean {
  const origin = originOf(url);
  if (origin === undefined) return false;
  if (origin === APP_ORIGIN) return true;
  return origins.devServerUrl !== undefined && origin === originOf(origins.devServerUrl);
}

/** The part of an IPC sender frame the check reads (Electron's WebFrameMain). */
export type SenderFrame = { readonly url: string; readonly parent: unknown } | null | undefined;

/** True only for the top frame of an app page: sub-frames, other origins and destroyed frames are refused. */
export function isTrustedSender(frame: SenderFrame, origins: RendererOrigins = {}): boolean {
  if (!frame) return false;
  if (frame.parent !== null) return false;
  return isAppUrl(frame.url, origins);
}

/** An https: link a person may open in their browser (after confirming), or undefined for anything else. */
export function externalLinkToOffer(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:') return undefined;
    if (parsed.username !== '' || parsed.password !== '') return undefined;
    return parsed.toString();
  } catch {
    return undefined;
  }
}

/**
 * What to do with a navigation or a window.open: the window never leaves the app and never opens another
 * window; an https: link may be offered to the system browser.
 */
export function decideNavigation(url: string): { allow: false; openExternal?: string } {
  const external = externalLinkToOffer(url);
  return external === undefined ? { allow: false } : { allow: false, openExternal: external };
}

/** The confirmation shown before an external link opens in the system browser (Cancel is the default). */
export function externalLinkDialog(url: string): MessageBoxOptions {
  return {
    type: 'question',
    buttons: ['Cancel', 'Open in Browser'],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    title: 'Open link',
    message: 'Open this link in your browser?',
    detail: url,
  };
}

/** The button index of `externalLinkDialog` that means "open". */
export const OPEN_EXTERNAL_BUTTON = 1;

/**
 * Permission requests (camera, clipboard-read, geolocation, ...): every one denied but `notifications`
 * (issue #32: the app's own notices that a turn needs the person; they carry text, nothing comes in).
 */
export function denyPermissionRequest(
  _webContents: unknown,
  permission: string,
  callback: (granted: boolean) => void,
): void {
  callback(permission === 'notifications');
}

/** Permission checks: every one answered no but `notifications` (see denyPermissionRequest). */
export function denyPermissionCheck(_webContents?: unknown, permission?: string): boolean {
  return permission === 'notifications';
}
