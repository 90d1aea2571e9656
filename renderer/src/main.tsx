import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { ServeConnectionBanner } from './components/ServeConnectionBanner.js';
import './styles/index.css';

/** Mounts the app once `window.keel` exists: Electron's preload provides it; in `keel serve` the WebSocket bridge does. */
async function start(): Promise<void> {
  // Under keel serve the page also says how its link to the server is doing (issue #37).
  const served = window.keel === undefined;
  if (served) {
    const { installKeelBridge } = await import('../bridge/wsBridge.js');
    installKeelBridge();
  }
  const root = document.getElementById('root');
  if (!root) return;
  createRoot(root).render(
    <StrictMode>
      {served ? <ServeConnectionBanner /> : null}
      <App />
    </StrictMode>,
  );
}

void start().catch(() => {
  const root = document.getElementById('root');
  if (root)
    root.textContent =
      'Keel could not connect to its backend. Check that keel is still running, then reload.';
});
