import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import { CHANNEL_NAMES, ipcChannelOf, type ChannelName, type IpcResult } from '../ipc/contract.js';
import type { Handlers } from '../ipc/handlers.js';
import { isTrustedSender, type RendererOrigins, type SenderFrame } from './security.js';

/** The Electron IPC router: every contract channel, each call's sender frame checked before the handler runs. */
export type IpcRouter = {
  /** `[ipc channel, contract channel]` for every channel the router answers. */
  readonly routes: readonly (readonly [string, ChannelName])[];
  /** Answers one invoke: `forbidden` unless the sender is the app's top frame, else the handler's result. */
  handle(
    channel: ChannelName,
    sender: { senderFrame: SenderFrame; sender?: { id: number } },
    input: unknown,
  ): Promise<IpcResult<unknown>>;
};

/**
 * The handler-table client of a window's page: its terminals and output flows belong to it and are released
 * (Handlers.disconnect) when the page reloads or the window closes.
 */
export function windowClient(webContentsId: number): string {
  return `window-${webContentsId}`;
}

/** Builds the router over a handler table; `origins` names the dev server in development. */
export function createIpcRouter(
  handlers: Pick<Handlers, 'invoke'>,
  origins: RendererOrigins = {},
): IpcRouter {
  return {
    routes: CHANNEL_NAMES.map((channel) => [ipcChannelOf(channel), channel] as const),
    async handle(channel, sender, input) {
      let frame: SenderFrame;
      try {
        frame = sender.senderFrame;
      } catch {
        // Electron throws when the frame has navigated away or been destroyed.
        frame = null;
      }
      if (!isTrustedSender(frame, origins)) {
        return {
          ok: false,
          error: { code: 'forbidden', message: 'IPC is accepted only from the Keel window' },
        };
      }
      return handlers.invoke(channel, input, sender.sender ? windowClient(sender.sender.id) : undefined);
    },
  };
}

/** Registers the router with ipcMain: the only place in Keel that calls ipcMain.handle. Returns the unmount. */
export function mountIpcRouter(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  router: IpcRouter,
): () => void {
  for (const [ipcChannel, channel] of router.routes) {
    ipcMain.handle(ipcChannel, (event: IpcMainInvokeEvent, input: unknown) =>
      router.handle(channel, event, input),
    );
  }
  return () => {
    for (const [ipcChannel] of router.routes) ipcMain.removeHandler(ipcChannel);
  };
}
