import type { MenuItemConstructorOptions } from 'electron';
import type { AppCommand } from '../ipc/contract.js';

/** What the menu needs from the shell. */
export type MenuActions = {
  /** Shows the native folder picker, then starts a new session there. */
  openFolder: () => void;
  /** Sends a command to the UI. */
  command: (command: AppCommand) => void;
};

/**
 * The application menu: the usual roles (edit, zoom, window, quit) and Keel's own entries with their
 * shortcuts. Reload and developer tools only while developing (`dev`).
 */
export function buildMenuTemplate(options: {
  platform: NodeJS.Platform;
  appName: string;
  dev: boolean;
  actions: MenuActions;
}): MenuItemConstructorOptions[] {
  const { actions } = options;
  const mac = options.platform === 'darwin';
  const settings: MenuItemConstructorOptions = {
    label: mac ? 'Settings…' : 'Settings',
    accelerator: 'CmdOrCtrl+,',
    click: () => actions.command({ command: 'openSettings' }),
  };
  const template: MenuItemConstructorOptions[] = [];
  if (mac) {
    template.push({
      label: options.appName,
      submenu: [
        { role: 'about' },
        { type: 'separator' },
        settings,
        { type: 'separator' },
        { role: 'services' },
        { type: 'separator' },
        { role: 'hide' },
        { role: 'hideOthers' },
        { role: 'unhide' },
        { type: 'separator' },
        { role: 'quit' },
      ],
    });
  }
  template.push(
    {
      label: '&File',
      submenu: [
        {
          label: 'New Session',
          accelerator: 'CmdOrCtrl+N',
          click: () => actions.command({ command: 'newSession' }),
        },
        { label: 'Open Folder…', accelerator: 'CmdOrCtrl+O', click: () => actions.openFolder() },
        { type: 'separator' },
        ...(mac ? [] : [settings, { type: 'separator' } as const]),
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    {
      label: '&Edit',
      submenu: [
        { role: 'undo' },
        { role: 'redo' },
        { type: 'separator' },
        { role: 'cut' },
        { role: 'copy' },
        { role: 'paste' },
        { role: 'selectAll' },
        { type: 'separator' },
        {
          label: 'Search Sessions',
          accelerator: 'CmdOrCtrl+Shift+F',
          click: () => actions.command({ command: 'focusSearch' }),
        },
      ],
    },
    {
      label: '&View',
      submenu: [
        ...(options.dev
          ? ([{ role: 'reload' }, { role: 'toggleDevTools' }, { type: 'separator' }] as const)
          : []),
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    {
      label: '&Window',
      submenu: mac
        ? [{ role: 'minimize' }, { role: 'zoom' }, { type: 'separator' }, { role: 'front' }]
        : [{ role: 'minimize' }, { role: 'close' }],
    },
  );
  return template;
}
