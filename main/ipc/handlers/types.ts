import { type Clock } from '../../common/clock.js';
import type { SessionEndReason } from '../../common/hookEvents.js';
import {
  type AppCommand,
  type ChannelArgs,
  type ChannelName,
  type ChannelOutput,
  type IpcResult,
} from '../contract.js';
import { type Hub } from '../hub.js';
import { type KeyStore } from '../keys.js';

/** A local OpenAI-compatible server `providers.detectLocal` looks for. */
export type LocalServerCandidate = { name: string; baseUrl: string };

/** What the handler table is built over: a home, and what differs between the app and `keel serve`. */
export type HandlerOptions = {
  /** The Keel home (index.sqlite, sessions/, settings.json). */
  home: string;
  mode: 'electron' | 'serve';
  /** The app version app.info reports. */
  version: string;
  /** Providers' key fallback and commands' allowlisted variables. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where API keys live. Default: the environment (read-only). */
  keyStore?: KeyStore;
  /** The native folder picker (Electron); without it projects.openFolder needs a path. */
  pickFolder?: (startFolder: string | undefined) => Promise<string | null>;
  /** Model requests per turn (the turn's budget). */
  maxSteps?: number;
  /** Where providers.detectLocal looks (tests point it at a scripted server). */
  localServers?: readonly LocalServerCandidate[];
  /** Drains the shell's commands that arrived before the UI listened (Electron); none in `keel serve`. */
  takeLaunchCommands?: () => AppCommand[];
  /** Called when a project folder was opened or used (Electron adds it to the OS recent list). */
  onProjectUsed?: (folder: string) => void;
  /** The clock model lifecycle is judged by (tests pin their day). Default: the system's. */
  clock?: Clock;
  /** Issue 33: opens a sign-in's URL in the system browser (Electron); `keel serve`'s page shows it instead. */
  openExternal?: (url: string) => void;
  /** Issue 34: the origin catalogue downloads come from instead of Hugging Face (keel serve's test seam). */
  localModelBase?: string;
};

/**
 * Who calls: the transport's connection (a `keel serve` WebSocket, the Electron window). Flow control and
 * interactive terminals belong to a connection and are released when it goes (`Handlers.disconnect`).
 */
export type Caller = { client: string };

/** The connection of callers that name none (the Electron window, tests). */
export const DEFAULT_CLIENT = 'app';

/** The handler of every channel: validated arguments in, a contract value out (validated by `invoke`). */
export type HandlerTable = {
  [C in ChannelName]: (args: ChannelArgs<C>, caller: Caller) => Promise<ChannelOutput<C>> | ChannelOutput<C>;
};

/** The handler table mounted by a transport. */
export type Handlers = {
  /** Pushed events for every subscriber of this table. */
  readonly hub: Hub;
  /**
   * Validates input, runs the channel, validates output. Never throws: every failure is `{ ok: false, error }`.
   * `client` names the caller's connection (default DEFAULT_CLIENT).
   */
  invoke(channel: unknown, input: unknown, client?: string): Promise<IpcResult<unknown>>;
  /** A connection went away: its command-output flows are released and its terminals killed. */
  disconnect(client: string): Promise<void>;
  /** Sessions with a turn running in this process. */
  runningSessions(): string[];
  /**
   * Stops running turns (interruptions recorded) and terminals, ends the sessions this process ran (SessionEnd
   * hooks with `reason`, default `other`; the app's quit is `prompt_input_exit`), releases their leases and
   * closes the index. Idempotent.
   */
  close(reason?: SessionEndReason): Promise<void>;
};
