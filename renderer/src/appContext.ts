import { createContext, useContext } from 'react';
import type { ChannelOutput, SettingsView } from '../../main/ipc/contract.js';

/** Where the main pane is. The session browser is always visible beside it. */
export type Route =
  | { screen: 'home' }
  /** `find`: a search hit's word, opened from the list's search: the transcript goes to it and marks it. */
  | { screen: 'session'; sessionId: string; find?: string }
  | { screen: 'settings' };

/** What the new-session dialog starts with (e.g. a detected local model or a recent folder). */
export type NewSessionPrefill = { projectFolder?: string };

/** App-wide state every screen may read: settings, app info and navigation. */
export type AppState = {
  route: Route;
  navigate: (route: Route) => void;
  settings: SettingsView | undefined;
  reloadSettings: () => void;
  /** Shows settings a write just returned, without another read. */
  applySettings: (view: SettingsView) => void;
  info: ChannelOutput<'app.info'> | undefined;
  openNewSession: (prefill?: NewSessionPrefill) => void;
  /** Moves focus to the session search box (the command palette's Search sessions, the app menu). */
  focusSearch: () => void;
};

/** The app state; provided once by App. */
export const AppContext = createContext<AppState | undefined>(undefined);

/** The app state; throws when used outside App (a programming error). */
export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('useApp must be used inside App');
  return state;
}

/**
 * True when no provider can be used yet: no key set, no local (OpenAI-compatible) base URL configured, and no
 * local model Keel runs itself as the default (issue 34: first run's "Use a local model" sets it).
 */
export function needsProviderSetup(view: SettingsView): boolean {
  const { keys, settings } = view;
  if (keys.anthropic || keys.openai || keys.openaiCompatible) return false;
  if (settings.defaults.provider === 'local' && settings.defaults.model) return false;
  const localUrl =
    settings.providers['openai-compatible']?.baseUrl ??
    (settings.defaults.provider === 'openai-compatible' ? settings.defaults.baseUrl : undefined);
  return localUrl === undefined;
}

/**
 * The route as the page's address keeps it (issue 37): `#/session/<id>`, `#/settings`, nothing for home. The hash
 * leaves keel serve's `?token=` alone, and a reload or a copied address opens the same session.
 */
export function routeToHash(route: Route): string {
  if (route.screen === 'session') return `#/session/${encodeURIComponent(route.sessionId)}`;
  if (route.screen === 'settings') return '#/settings';
  return '';
}

/** The route an address's hash names; home for anything else. */
export function routeFromHash(hash: string): Route {
  const session = /^#\/session\/([^/?#]+)$/.exec(hash);
  if (session?.[1]) {
    try {
      return { screen: 'session', sessionId: decodeURIComponent(session[1]) };
    } catch {
      return { screen: 'home' };
    }
  }
  if (hash === '#/settings') return { screen: 'settings' };
  return { screen: 'home' };
}
