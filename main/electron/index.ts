import fs from 'node:fs';
import path from 'node:path';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  protocol,
  safeStorage,
  screen,
  session,
  shell,
  type WebContents,
} from 'electron';
import { IPC_PUSH, type AppCommand } from '../ipc/contract.js';
import { createHandlers, type Handlers } from '../ipc/handlers.js';
import { useKeychainForMcpTokens } from '../core/harness/index.js';
import { createSafeStorageKeyStore, mcpTokenEncryptor } from './keys.js';
import { folderFromArgv } from './launchArgs.js';
import { useUtilityProcessForLocalModels } from './localModelProcess.js';
import { buildMenuTemplate } from './menu.js';
import { createAppProtocolHandler } from './protocol.js';
import { createIpcRouter, mountIpcRouter, windowClient } from './router.js';
import {
  APP_ENTRY_URL,
  APP_SCHEME,
  APP_SCHEME_PRIVILEGES,
  decideNavigation,
  denyPermissionCheck,
  denyPermissionRequest,
  externalLinkDialog,
  isAppUrl,
  OPEN_EXTERNAL_BUTTON,
} from './security.js';
import { createApprovalBadge, readNotificationSettings, requestAttention } from './attention.js';
import { fitWindowState, MIN_WINDOW, readWindowState, writeWindowState } from './windowState.js';

/*
 * The desktop shell: wires the pure pieces (security.ts, router.ts, protocol.ts, keys.ts, windowState.ts,
 * menu.ts) to Electron. Every decision lives in those modules and is unit-tested; this file only connects.
 */

const devServerUrl = app.isPackaged ? undefined : process.env['ELECTRON_RENDERER_URL'];
const origins = { devServerUrl };
/** argv entries before the user's own: the executable, and unpackaged also the app path. */
const argvSkip = app.isPackaged ? 1 : 2;
const isDirectory = (folder: string) => {
  try {
    return fs.statSync(folder).isDirectory();
  } catch {
    return false;
  }
};

// Before `ready`: keel:// as a secure standard origin, and every renderer sandboxed.
protocol.registerSchemesAsPrivileged([...APP_SCHEME_PRIVILEGES]);
app.enableSandbox();

if (app.requestSingleInstanceLock()) {
  runApp();
} else {
  // The first instance gets our argv through 'second-instance' and opens the folder there.
  app.quit();
}

function runApp(): void {
  let window: BrowserWindow | undefined;
  let handlers: Handlers | undefined;
  let unmountRouter: (() => void) | undefined;
  let quitting = false;
  const waitingCommands: AppCommand[] = [];
  const userData = app.getPath('userData');
  const home = process.env['KEEL_HOME'] ? path.resolve(process.env['KEEL_HOME']) : userData;

  const windowShowsApp = () =>
    window !== undefined && !window.isDestroyed() && isAppUrl(window.webContents.getURL(), origins);

  // Commands wait until the page has loaded; the UI drains them with app.launchCommands once it listens.
  let pageLoaded = false;
  const sendCommand = (command: AppCommand) => {
    if (window && pageLoaded && windowShowsApp()) {
      window.webContents.send(IPC_PUSH, { topic: 'app.command', payload: command });
    } else waitingCommands.push(command);
  };

  const pickFolder = async (start: string | undefined): Promise<string | null> => {
    const options = {
      title: 'Open a project folder',
      properties: ['openDirectory', 'createDirectory'] as ('openDirectory' | 'createDirectory')[],
      ...(start ? { defaultPath: start } : {}),
    };
    const result = window
      ? await dialog.showOpenDialog(window, options)
      : await dialog.showOpenDialog(options);
    return result.canceled ? null : (result.filePaths[0] ?? null);
  };

  const offerExternal = async (url: string) => {
    const { openExternal } = decideNavigation(url);
    if (openExternal === undefined) return;
    const dialogOptions = externalLinkDialog(openExternal);
    const answer = window
      ? await dialog.showMessageBox(window, dialogOptions)
      : await dialog.showMessageBox(dialogOptions);
    if (answer.response === OPEN_EXTERNAL_BUTTON) await shell.openExternal(openExternal);
  };

  const createWindow = () => {
    const displays = screen.getAllDisplays().map((display) => display.workArea);
    const state = fitWindowState(readWindowState(userData), displays);
    window = new BrowserWindow({
      ...(state.x !== undefined && state.y !== undefined ? { x: state.x, y: state.y } : {}),
      width: state.width,
      height: state.height,
      minWidth: MIN_WINDOW.width,
      minHeight: MIN_WINDOW.height,
      title: 'Keel',
      show: false,
      // Exactly SECURE_WEB_PREFERENCES (security.ts) plus the preload; written out so scanners can read it.
      webPreferences: {
        preload: path.join(import.meta.dirname, '../preload/index.cjs'),
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
      },
    });
    const current = window;
    if (state.maximized) current.maximize();
    current.once('ready-to-show', () => current.show());
    const client = windowClient(current.webContents.id);
    current.webContents.on('did-start-loading', () => {
      pageLoaded = false;
      // A reload starts a new page: the old page's terminals and output flows go with it.
      void handlers?.disconnect(client);
    });
    current.webContents.on('did-finish-load', () => {
      pageLoaded = true;
    });
    current.on('close', () => {
      const bounds = current.getNormalBounds();
      writeWindowState(userData, { ...bounds, maximized: current.isMaximized() });
    });
    current.on('closed', () => {
      void handlers?.disconnect(client);
      if (window === current) window = undefined;
    });
    void current.loadURL(devServerUrl ?? APP_ENTRY_URL);
  };

  const focusWindow = () => {
    if (!window) return createWindow();
    if (window.isMinimized()) window.restore();
    window.focus();
  };

  app.on('second-instance', (_event, argv, workingDirectory) => {
    focusWindow();
    const folder = folderFromArgv(argv, { cwd: workingDirectory, skip: argvSkip, isDirectory });
    if (folder) sendCommand({ command: 'newSession', folder });
  });

  // Every web contents, present and future: no navigation, no new windows, no webviews.
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.setWindowOpenHandler(({ url }) => {
      void offerExternal(url);
      return { action: 'deny' };
    });
    contents.on('will-navigate', (event, url) => {
      event.preventDefault();
      void offerExternal(url);
    });
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });

  const shutdown = async () => {
    unmountRouter?.();
    // Issue #30: the user quit the app: the sessions it ran end with SessionEnd's `prompt_input_exit`.
    await handlers?.close('prompt_input_exit');
  };

  app.on('before-quit', (event) => {
    if (quitting || !handlers) return;
    // Stop running turns (interruptions recorded) and release leases before the process goes.
    event.preventDefault();
    quitting = true;
    void shutdown().finally(() => app.quit());
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });

  void app.whenReady().then(() => {
    useUtilityProcessForLocalModels(import.meta.dirname);
    session.defaultSession.setPermissionRequestHandler(denyPermissionRequest);
    session.defaultSession.setPermissionCheckHandler(denyPermissionCheck);
    protocol.handle(APP_SCHEME, createAppProtocolHandler(path.join(import.meta.dirname, '../renderer')));

    // Issue 33: MCP sign-in tokens encrypted by the OS keychain (safeStorage is usable only once the app is ready).
    useKeychainForMcpTokens(mcpTokenEncryptor(safeStorage), 'the OS keychain (Electron safeStorage)');
    handlers = createHandlers({
      home,
      mode: 'electron',
      version: app.getVersion(),
      keyStore: createSafeStorageKeyStore(safeStorage, userData, process.platform, home),
      pickFolder,
      takeLaunchCommands: () => waitingCommands.splice(0),
      onProjectUsed: (folder) => app.addRecentDocument(folder),
      // Issue 33: an MCP sign-in's authorization URL (http/https only, checked by the handler).
      openExternal: (url) => void shell.openExternal(url),
    });
    unmountRouter = mountIpcRouter(ipcMain, createIpcRouter(handlers, origins));
    const badge = createApprovalBadge(app);
    handlers.hub.subscribe((push) => {
      if (window && windowShowsApp()) window.webContents.send(IPC_PUSH, push);
      badge(push);
      // Issue #32: a turn that needs the person flashes the window (bounces the dock) while it is unfocused.
      if (push.topic === 'session.status' && push.payload.outcome)
        requestAttention(push, window, app.dock, readNotificationSettings(home));
    });

    Menu.setApplicationMenu(
      Menu.buildFromTemplate(
        buildMenuTemplate({
          platform: process.platform,
          appName: app.name,
          dev: !app.isPackaged,
          actions: {
            openFolder: () =>
              void pickFolder(undefined).then((folder) => {
                if (folder) sendCommand({ command: 'newSession', folder });
              }),
            command: sendCommand,
          },
        }),
      ),
    );

    const launchFolder = folderFromArgv(process.argv, { cwd: process.cwd(), skip: argvSkip, isDirectory });
    if (launchFolder) waitingCommands.push({ command: 'newSession', folder: launchFolder });
    createWindow();
  });
}
