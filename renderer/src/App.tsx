import { useCallback, useEffect, useMemo, useRef, useState, type JSX } from 'react';
import { call } from './api/call.js';
import { keel } from './api/keel.js';
import { useQuery } from './api/useQuery.js';
import {
  AppContext,
  needsProviderSetup,
  routeFromHash,
  routeToHash,
  type AppState,
  type NewSessionPrefill,
  type Route,
} from './appContext.js';
import { ErrorBoundary } from './components/ErrorBoundary.js';
import { GlobalKeys } from './components/keyboard/GlobalKeys.js';
import { applyTheme } from './lib/theme.js';
import { ErrorState, LoadingState } from './components/States.js';
import { prefetchMonacoAfterStartup } from './components/monaco/loadMonaco.js';
import { markOnce } from './lib/perf.js';
import { PendingApprovalsBadge } from './screens/approvals/PendingApprovalsBadge.js';
import { SessionBrowser } from './screens/browser/SessionBrowser.js';
import type * as SessionViewTypes from './screens/session/SessionView.js';
import { FirstRun } from './screens/firstRun/FirstRun.js';
import { Welcome } from './screens/firstRun/Welcome.js';
import { NewSessionDialog } from './screens/newSession/NewSessionDialog.js';
import { SettingsScreen } from './screens/settings/SettingsScreen.js';
import { useTurnNotifications } from './notifications/useTurnNotifications.js';

// The session view brings Markdown and syntax highlighting: kept out of the startup bundle and fetched once
// the shell is idle. Not React.lazy: a Suspense reveal is throttled by React (300 ms).
type SessionViewModule = typeof SessionViewTypes;
let sessionViewModule: SessionViewModule | undefined;
const loadSessionView = async () => (sessionViewModule ??= await import('./screens/session/SessionView.js'));

/** The session view once its code is loaded (at once when it already is). */
function SessionScreen({ sessionId, find }: { sessionId: string; find?: string | undefined }): JSX.Element {
  const [loaded, setLoaded] = useState(sessionViewModule);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!loaded) loadSessionView().then(setLoaded, () => setFailed(true));
  }, [loaded]);
  if (loaded) return <loaded.SessionView key={sessionId} sessionId={sessionId} find={find} />;
  if (failed) return <ErrorState message="The session view could not be loaded. Reload the window." />;
  return <LoadingState label="Opening session…" />;
}

/** The application shell: the session browser on the left, the current screen on the right, dialogs above. */
export function App(): JSX.Element {
  // The open session is in the address: a reload or a copied link opens it again.
  const [route, setRoute] = useState<Route>(() => routeFromHash(window.location.hash));
  useEffect(() => {
    const hash = routeToHash(route);
    if (hash === window.location.hash) return;
    // Back and Forward go through the sessions opened (popstate below).
    window.history.pushState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
  }, [route]);
  useEffect(() => {
    const onHash = () => setRoute(routeFromHash(window.location.hash));
    window.addEventListener('popstate', onHash);
    window.addEventListener('hashchange', onHash);
    return () => {
      window.removeEventListener('popstate', onHash);
      window.removeEventListener('hashchange', onHash);
    };
  }, []);
  const [newSession, setNewSession] = useState<NewSessionPrefill | undefined>();
  const settings = useQuery(() => call(keel().settings.get()), []);
  const info = useQuery(() => call(keel().app.info()), []);
  const searchRef = useRef<HTMLInputElement>(null);
  useTurnNotifications(settings.data?.settings.notifications, (sessionId) =>
    setRoute({ screen: 'session', sessionId }),
  );

  useEffect(() => {
    markOnce('keel:shell-rendered');
    const warm = requestIdleCallback(() => void loadSessionView(), { timeout: 1000 });
    return () => cancelIdleCallback(warm);
  }, []);

  // Monaco (its 3 MB chunk, then its diff worker) loads once the session list is shown and the user has been
  // idle for a moment, so the first diff opened does not wait for it. Still a lazy chunk, not in this bundle.
  useEffect(() => prefetchMonacoAfterStartup(), []);

  const focusSearch = useCallback(() => {
    searchRef.current?.focus();
    searchRef.current?.select();
  }, []);

  // Issue #37: the theme settings.json keeps (System until it is read).
  const theme = settings.data?.settings.appearance?.theme ?? 'system';
  useEffect(() => applyTheme(theme), [theme]);

  const state = useMemo<AppState>(
    () => ({
      route,
      navigate: setRoute,
      settings: settings.data,
      reloadSettings: settings.reload,
      applySettings: settings.set,
      info: info.data,
      openNewSession: (prefill = {}) => setNewSession(prefill),
      focusSearch,
    }),
    [route, settings.data, settings.reload, settings.set, info.data, focusSearch],
  );

  return (
    <AppContext.Provider value={state}>
      <div className="app">
        <aside className="sidebar" aria-label="Session browser">
          <header className="sidebar-header">
            <button
              type="button"
              className="brand"
              onClick={() => setRoute({ screen: 'home' })}
              aria-label="Keel home"
            >
              <span className="brand-mark" aria-hidden="true">
                ⚓
              </span>
              <span className="brand-name">Keel</span>
            </button>
            <div className="sidebar-actions">
              <PendingApprovalsBadge onOpen={(sessionId) => setRoute({ screen: 'session', sessionId })} />
              <button type="button" className="button-primary" onClick={() => setNewSession({})}>
                New session
              </button>
              <button
                type="button"
                className={`icon-button${route.screen === 'settings' ? ' is-current' : ''}`}
                onClick={() => setRoute({ screen: 'settings' })}
                aria-label="Settings"
                title="Settings"
              >
                ⚙
              </button>
            </div>
          </header>
          <ErrorBoundary label="session list">
            <SessionBrowser searchRef={searchRef} />
          </ErrorBoundary>
        </aside>
        <main className="pane">
          <ErrorBoundary label={route.screen === 'session' ? 'session view' : route.screen}>
            {route.screen === 'session' ? (
              <SessionScreen sessionId={route.sessionId} find={route.find} />
            ) : route.screen === 'settings' ? (
              settings.error ? (
                <ErrorState
                  message={`Settings could not be read: ${settings.error}`}
                  onRetry={settings.reload}
                />
              ) : (
                <SettingsScreen />
              )
            ) : settings.error ? (
              <ErrorState
                message={`Keel could not read its settings: ${settings.error}`}
                onRetry={settings.reload}
              />
            ) : !settings.data ? (
              <LoadingState />
            ) : needsProviderSetup(settings.data) ? (
              <FirstRun />
            ) : (
              <Welcome />
            )}
          </ErrorBoundary>
        </main>
      </div>
      <GlobalKeys />
      {newSession ? <NewSessionDialog prefill={newSession} onClose={() => setNewSession(undefined)} /> : null}
    </AppContext.Provider>
  );
}
