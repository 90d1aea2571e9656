import { app, BrowserWindow } from 'electron';
import { join } from 'node:path';

/** Secure defaults for every window: the renderer is untrusted. */
export const secureWebPreferences = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  webviewTag: false,
  preload: join(import.meta.dirname, '../preload/index.cjs'),
} as const;

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    title: 'Keel',
    webPreferences: secureWebPreferences,
  });
  const devUrl = process.env['ELECTRON_RENDERER_URL'];
  if (devUrl) void window.loadURL(devUrl);
  else void window.loadFile(join(import.meta.dirname, '../renderer/index.html'));
}

void app.whenReady().then(createWindow);
app.on('window-all-closed', () => app.quit());
