import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createSafeStorageKeyStore,
  KEYS_FILE,
  mcpTokenEncryptor,
  type SafeStorageLike,
} from '../../../main/electron/keys.js';
import { folderFromArgv } from '../../../main/electron/launchArgs.js';
import { buildMenuTemplate } from '../../../main/electron/menu.js';
import { createAppProtocolHandler } from '../../../main/electron/protocol.js';
import { createIpcRouter, mountIpcRouter } from '../../../main/electron/router.js';
import { APP_ENTRY_URL, RENDERER_CSP } from '../../../main/electron/security.js';
import { fitWindowState, readWindowState, writeWindowState } from '../../../main/electron/windowState.js';
import { CHANNEL_NAMES, type AppCommand } from '../../../main/ipc/contract.js';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import { IpcFailure } from '../../../main/ipc/errors.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';

let dir: string;

beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-shell-'));
});

afterEach(() => removeTempDir(dir));

describe('the keel:// protocol handler', () => {
  beforeEach(() => {
    fs.mkdirSync(path.join(dir, 'renderer', 'assets'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'renderer', 'index.html'), '<!doctype html><title>Keel</title>');
    fs.writeFileSync(path.join(dir, 'renderer', 'assets', 'app.js'), 'export {};');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'secret');
  });

  it('serves the renderer with the CSP and refuses everything else', async () => {
    const handle = createAppProtocolHandler(path.join(dir, 'renderer'));
    const page = await handle(new Request(APP_ENTRY_URL));
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<!doctype html><title>Keel</title>');
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(RENDERER_CSP);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const script = await handle(new Request('keel://app/assets/app.js'));
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await handle(new Request('keel://app/../secret.txt'))).status).toBe(404);
    expect((await handle(new Request('keel://app/%2e%2e/secret.txt'))).status).toBe(404);
    expect((await handle(new Request('keel://app/assets/%2e%2e%2f%2e%2e%2fsecret.txt'))).status).toBe(404);
    expect((await handle(new Request('keel://other/index.html'))).status).toBe(404);
    expect((await handle(new Request(APP_ENTRY_URL, { method: 'POST', body: 'x' }))).status).toBe(405);
    const head = await handle(new Request(APP_ENTRY_URL, { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const refused = await handle(new Request('keel://app/missing.js'));
    expect(refused.headers.get('content-security-policy')).toBe(RENDERER_CSP);
  });
});

describe('the IPC router', () => {
  let handlers: Handlers;
  beforeEach(() => {
    handlers = createHandlers({ home: path.join(dir, 'home'), mode: 'electron', version: '1', env: {} });
  });
  afterEach(async () => handlers.close());

  it('routes every contract channel and nothing else', () => {
    const router = createIpcRouter(handlers);
    expect(router.routes).toEqual(CHANNEL_NAMES.map((channel) => [`keel:${channel}`, channel]));
  });

  it('answers the app top frame and refuses sub-frames, other origins and vanished frames', async () => {
    const router = createIpcRouter(handlers);
    const top = { senderFrame: { url: APP_ENTRY_URL, parent: null } };
    expect(await router.handle('projects.recent', top, {})).toEqual({ ok: true, value: { projects: [] } });
    const forbidden = {
      ok: false,
      error: { code: 'forbidden', message: 'IPC is accepted only from the Keel window' },
    };
    const subFrame = { senderFrame: { url: APP_ENTRY_URL, parent: { url: APP_ENTRY_URL, parent: null } } };
    expect(await router.handle('projects.recent', subFrame, {})).toEqual(forbidden);
    expect(
      await router.handle(
        'projects.recent',
        { senderFrame: { url: 'https://evil.example/', parent: null } },
        {},
      ),
    ).toEqual(forbidden);
    expect(await router.handle('projects.recent', { senderFrame: null }, {})).toEqual(forbidden);
    const destroyed = {
      get senderFrame(): never {
        throw new Error('Render frame was disposed before WebFrameMain could be accessed');
      },
    };
    expect(await router.handle('projects.recent', destroyed, {})).toEqual(forbidden);
    expect(await router.handle('turns.send', top, { sessionId: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    });
  });

  it("passes the sending window's client, so its terminals belong to that page", async () => {
    const calls: (string | undefined)[] = [];
    const router = createIpcRouter({
      invoke: (_channel, _input, client) => {
        calls.push(client);
        return Promise.resolve({ ok: true, value: {} });
      },
    });
    const top = { url: APP_ENTRY_URL, parent: null };
    await router.handle('terminal.list', { senderFrame: top, sender: { id: 7 } }, {});
    await router.handle('terminal.list', { senderFrame: top }, {});
    expect(calls).toEqual(['window-7', undefined]);
  });

  it('is mounted with one ipcMain.handle per channel and unmounted completely', async () => {
    // A recorder with ipcMain's two methods: Electron itself cannot run here.
    const registered = new Map<string, (event: unknown, input: unknown) => Promise<unknown>>();
    const unmount = mountIpcRouter(
      {
        handle: (channel: string, listener: (event: never, ...args: never[]) => unknown) => {
          registered.set(channel, listener as never);
        },
        removeHandler: (channel: string) => registered.delete(channel),
      },
      createIpcRouter(handlers),
    );
    expect([...registered.keys()]).toEqual(CHANNEL_NAMES.map((channel) => `keel:${channel}`));
    const info = registered.get('keel:projects.recent');
    expect(await info?.({ senderFrame: { url: APP_ENTRY_URL, parent: null } }, {})).toEqual({
      ok: true,
      value: { projects: [] },
    });
    unmount();
    expect(registered.size).toBe(0);
  });
});

describe('API keys in the OS keychain', () => {
  /** AES-256-GCM with a per-test key: a real cipher standing in for the OS keychain Electron would use. */
  function keychain(options: { available?: boolean; backend?: string } = {}): SafeStorageLike {
    const key = crypto.randomBytes(32);
    return {
      isEncryptionAvailable: () => options.available ?? true,
      getSelectedStorageBackend: () => options.backend ?? 'gnome_libsecret',
      encryptString: (text) => {
        const iv = crypto.randomBytes(12);
        const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
        const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
        return Buffer.concat([iv, cipher.getAuthTag(), body]);
      },
      decryptString: (data) => {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
        decipher.setAuthTag(data.subarray(12, 28));
        return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
      },
    };
  }

  it('stores keys encrypted, reads them back, removes them, and never writes them in plain text', () => {
    const store = createSafeStorageKeyStore(keychain(), dir, 'linux');
    store.write?.({ anthropic: 'sk-ant-secret-1', openai: 'sk-openai-secret-2' });
    expect(store.read()).toEqual({ anthropic: 'sk-ant-secret-1', openai: 'sk-openai-secret-2' });
    const text = fs.readFileSync(path.join(dir, KEYS_FILE), 'utf8');
    expect(text).not.toContain('secret');
    expect(fs.statSync(path.join(dir, KEYS_FILE)).mode & 0o777).toBe(0o600);
    store.write?.({ openai: null });
    expect(store.read()).toEqual({ anthropic: 'sk-ant-secret-1' });
  });

  it('refuses to store keys when the keychain is missing or would be plain text, and reads nothing', () => {
    for (const problem of [keychain({ available: false }), keychain({ backend: 'basic_text' })]) {
      const store = createSafeStorageKeyStore(problem, dir, 'linux');
      expect(() => store.write?.({ anthropic: 'sk-ant' })).toThrow(IpcFailure);
      expect(fs.existsSync(path.join(dir, KEYS_FILE))).toBe(false);
    }
    createSafeStorageKeyStore(keychain(), dir, 'linux').write?.({ anthropic: 'sk-other-machine' });
    // Another keychain cannot decrypt them: they count as not set.
    expect(createSafeStorageKeyStore(keychain(), dir, 'linux').read()).toEqual({});
  });

  it('issue 33: hands MCP token encryption to the keychain only where it is not plain text', () => {
    const usable = mcpTokenEncryptor(keychain(), 'linux');
    expect(usable?.decryptString(usable.encryptString('tok-1'))).toBe('tok-1');
    expect(usable?.encryptString('tok-1').toString('latin1')).not.toContain('tok-1');
    expect(mcpTokenEncryptor(keychain({ available: false }), 'linux')).toBeUndefined();
    expect(mcpTokenEncryptor(keychain({ backend: 'basic_text' }), 'linux')).toBeUndefined();
  });
});

describe('window state', () => {
  const display = { x: 0, y: 0, width: 1920, height: 1080 };

  it('saves and restores bounds; a missing or broken file gives the default', () => {
    expect(readWindowState(dir)).toEqual({ width: 1280, height: 820, maximized: false });
    writeWindowState(dir, { x: 100, y: 50, width: 1000, height: 700, maximized: true });
    expect(readWindowState(dir)).toEqual({ x: 100, y: 50, width: 1000, height: 700, maximized: true });
    fs.writeFileSync(path.join(dir, 'window-state.json'), '{broken');
    expect(readWindowState(dir).width).toBe(1280);
  });

  it('keeps a visible position, centers a window left on a vanished display, and clamps the size', () => {
    expect(fitWindowState({ x: 100, y: 50, width: 1000, height: 700, maximized: false }, [display])).toEqual({
      x: 100,
      y: 50,
      width: 1000,
      height: 700,
      maximized: false,
    });
    expect(
      fitWindowState({ x: 2500, y: 100, width: 1000, height: 700, maximized: false }, [display]),
    ).toEqual({
      width: 1000,
      height: 700,
      maximized: false,
    });
    expect(fitWindowState({ width: 5000, height: 300, maximized: false }, [display])).toEqual({
      width: 1920,
      height: 560,
      maximized: false,
    });
  });
});

describe('launch arguments', () => {
  it('finds the folder a launch names, relative to its working directory, ignoring flags and the app path', () => {
    fs.mkdirSync(path.join(dir, 'project'));
    const options = {
      cwd: dir,
      skip: 2,
      isDirectory: (folder: string) => fs.existsSync(folder) && fs.statSync(folder).isDirectory(),
    };
    expect(folderFromArgv(['/usr/bin/electron', '.', 'project'], options)).toBe(path.join(dir, 'project'));
    expect(folderFromArgv(['/usr/bin/electron', '.', '--inspect', path.join(dir, 'project')], options)).toBe(
      path.join(dir, 'project'),
    );
    expect(folderFromArgv(['/usr/bin/electron', '.', 'missing'], options)).toBeUndefined();
    expect(folderFromArgv(['/opt/Keel/keel', dir], { ...options, skip: 1 })).toBe(dir);
    expect(folderFromArgv(['/usr/bin/electron', dir], options)).toBeUndefined();
  });
});

describe('the application menu', () => {
  type Item = { role?: string; label?: string; accelerator?: string; click?: () => void; submenu?: Item[] };
  const flatten = (items: Item[]): Item[] => items.flatMap((item) => [item, ...flatten(item.submenu ?? [])]);

  it('has the usual roles and Keel entries with their shortcuts, dev tools only in development', () => {
    const commands: AppCommand[] = [];
    let opened = 0;
    const actions = { openFolder: () => opened++, command: (command: AppCommand) => commands.push(command) };
    const linux = flatten(
      buildMenuTemplate({ platform: 'linux', appName: 'Keel', dev: false, actions }) as Item[],
    );
    const roles = linux.flatMap((item) => (item.role ? [item.role] : []));
    for (const role of [
      'undo',
      'redo',
      'cut',
      'copy',
      'paste',
      'selectAll',
      'quit',
      'zoomIn',
      'zoomOut',
      'resetZoom',
      'minimize',
    ]) {
      expect(roles).toContain(role);
    }
    expect(roles).not.toContain('toggleDevTools');
    expect(roles).not.toContain('reload');
    const byLabel = (label: string) => linux.find((item) => item.label === label);
    expect(byLabel('Open Folder…')?.accelerator).toBe('CmdOrCtrl+O');
    expect(byLabel('New Session')?.accelerator).toBe('CmdOrCtrl+N');
    expect(byLabel('Settings')?.accelerator).toBe('CmdOrCtrl+,');
    byLabel('Open Folder…')?.click?.();
    byLabel('New Session')?.click?.();
    byLabel('Settings')?.click?.();
    byLabel('Search Sessions')?.click?.();
    expect(opened).toBe(1);
    expect(commands).toEqual([
      { command: 'newSession' },
      { command: 'openSettings' },
      { command: 'focusSearch' },
    ]);

    const mac = buildMenuTemplate({ platform: 'darwin', appName: 'Keel', dev: true, actions }) as Item[];
    expect(mac[0]?.label).toBe('Keel');
    const macRoles = flatten(mac).flatMap((item) => (item.role ? [item.role] : []));
    expect(macRoles).toEqual(expect.arrayContaining(['about', 'hide', 'quit', 'toggleDevTools', 'front']));
  });
});
