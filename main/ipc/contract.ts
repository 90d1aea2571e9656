import { z } from 'zod';
import { SessionEvent } from '../common/events.js';
import { appChannels } from './contract/appChannels.js';
import { backgroundChannels } from './contract/backgroundChannels.js';
import { composerChannels } from './contract/composerChannels.js';
import { historyChannels } from './contract/historyChannels.js';
import { importChannels, importProgress } from './contract/importChannels.js';
import { checkoutChannels } from './contract/checkoutChannels.js';
import { mcpChannels } from './contract/mcpChannels.js';
import { planChannels } from './contract/planChannels.js';
import { localModelChannels, localModelProgress } from './contract/localModelChannels.js';
import { reviewChannels } from './contract/reviewChannels.js';
import {
  AppCommand,
  Delta,
  IpcError,
  SessionStatus,
  TerminalExit,
  TurnOutcome,
  type IpcResult,
} from './contract/schemas.js';
import { sessionChannels } from './contract/sessionChannels.js';
import { setupChannels } from './contract/setupChannels.js';
import { workChannels } from './contract/workChannels.js';

/*
 * The one contract: every channel (one file per group under contract/), every pushed topic, and the API
 * built from them. The renderer and the preload import only this file; its parts import only zod and
 * main/common.
 */

export * from './contract/schemas.js';
export { RevertConflict, RevertOutcome } from './contract/historyChannels.js';
export { Mention, PROMPT_MAX_CHARS, SlashCommand } from './contract/composerChannels.js';
// Issue 30: plan mode's vocabulary (the plan card reads a present_plan request's plan).
export { PlanPolicy, planTextOf, PRESENT_PLAN_TOOL } from '../common/planEvents.js';
export { BackgroundCommand } from './contract/backgroundChannels.js';

/** Every channel the UI can call. Adding one to a group adds it to the preload, the ws bridge and the handler table's type. */
export const channels = {
  ...sessionChannels,
  ...reviewChannels,
  ...workChannels,
  ...historyChannels,
  ...appChannels,
  // Issue 35: Settings → Import history.
  ...importChannels,
  // Issue 30: a project's setup trust and permission rules.
  ...setupChannels,
  // Issue 37: the composer.
  ...composerChannels,
  // Issue 36: Settings → Checkout storage.
  ...checkoutChannels,
  // Issue 30: plan mode (the mode toggle, the plan card).
  ...planChannels,
  // Issue 34: local models (first run's "Use a local model").
  ...localModelChannels,
  // Issue 32: background commands in the terminal dock.
  ...backgroundChannels,
  // Issue 33: Settings → MCP servers (add, edit, remove, sign in / out).
  ...mcpChannels,
};

/** Every channel name, e.g. `sessions.list`. */
export type ChannelName = keyof typeof channels;

/** All channel names, in contract order. */
export const CHANNEL_NAMES = Object.keys(channels) as ChannelName[];

/** What the caller passes (defaults not yet applied). */
export type ChannelInput<C extends ChannelName> = z.input<(typeof channels)[C]['input']>;
/** What a handler receives (validated, defaults applied). */
export type ChannelArgs<C extends ChannelName> = z.output<(typeof channels)[C]['input']>;
/** What a channel resolves to on success. */
export type ChannelOutput<C extends ChannelName> = z.output<(typeof channels)[C]['output']>;

/** Every event main pushes to subscribers, by topic. */
export const topics = {
  /** An event was committed to a session log (by a turn, a decision, a rename...). */
  'event.appended': z.object({ sessionId: z.string(), event: SessionEvent }),
  /** A provider delta of a running turn; `sentAt` is main's Date.now() when pushed (latency measurement). */
  'turn.delta': z.object({ sessionId: z.string(), turnId: z.string(), delta: Delta, sentAt: z.number() }),
  /** Live redacted output of a running command (never split inside a character); after tool.watch, ack it with tool.outputAck. */
  'tool.output': z.object({
    sessionId: z.string(),
    turnId: z.string(),
    toolCallId: z.string(),
    chunk: z.string(),
  }),
  /** Progress that is not an event (a retry after a transient failure), in words. */
  'turn.notice': z.object({ sessionId: z.string(), turnId: z.string(), text: z.string() }),
  /** A session's status changed (turn started/ended); `outcome` is set when a turn ended. */
  'session.status': z.object({
    sessionId: z.string(),
    status: SessionStatus,
    running: z.boolean(),
    turnId: z.string().optional(),
    outcome: TurnOutcome.optional(),
  }),
  /** The session list changed (created, renamed, archived, deleted, status or activity): re-query it. */
  'sessions.changed': z.object({
    sessionId: z.string(),
    change: z.enum(['created', 'updated', 'renamed', 'archived', 'deleted']),
  }),
  /** Output of an interactive terminal (redacted, never split inside a character); ack it with terminal.ack. */
  'terminal.data': z.object({ terminalId: z.string(), sessionId: z.string(), chunk: z.string() }),
  /** An interactive terminal ended (exited, or was killed). */
  'terminal.exit': TerminalExit.extend({ terminalId: z.string(), sessionId: z.string() }),
  /** The desktop shell asks the UI to act (app menu, a folder passed to a second launch); never sent by `keel serve`. */
  'app.command': AppCommand,
  /** Issue 35: an imports.run's progress (session files read of all found). */
  'imports.progress': importProgress,
  /** Issue 34: a models.localPull's progress (bytes, speed, time left) and its end. */
  'models.localProgress': localModelProgress,
} as const;

/** Every topic name, e.g. `turn.delta`. */
export type TopicName = keyof typeof topics;

/** All topic names. */
export const TOPIC_NAMES = Object.keys(topics) as TopicName[];

/** The payload of a pushed event of `T`. */
export type TopicPayload<T extends TopicName> = z.output<(typeof topics)[T]>;

type GroupOf<C extends string> = C extends `${infer G}.${string}` ? G : never;
type MethodOf<C extends string, G extends string> = C extends `${G}.${infer M}` ? M : never;

/** The function for one channel: input optional when every field is optional. */
export type ChannelFunction<C extends ChannelName> =
  Record<string, never> extends ChannelInput<C>
    ? (input?: ChannelInput<C>) => Promise<IpcResult<ChannelOutput<C>>>
    : (input: ChannelInput<C>) => Promise<IpcResult<ChannelOutput<C>>>;

/**
 * `window.keel`: exactly one function per channel, grouped by the part before the dot
 * (`keel.sessions.list(...)` calls `sessions.list`), plus `subscribe`. Nothing else.
 */
export type KeelApi = {
  readonly [G in GroupOf<ChannelName>]: {
    readonly [M in MethodOf<ChannelName, G>]: ChannelFunction<`${G}.${M}` & ChannelName>;
  };
} & {
  /** Calls `handler` for every pushed event of `topic` until the returned function is called. */
  readonly subscribe: <T extends TopicName>(
    topic: T,
    handler: (payload: TopicPayload<T>) => void,
  ) => () => void;
};

/** Splits a channel name into its API group and method (`sessions.list` → [`sessions`, `list`]). */
export function splitChannel(channel: ChannelName): [string, string] {
  const dot = channel.indexOf('.');
  return [channel.slice(0, dot), channel.slice(dot + 1)];
}

/** Builds a KeelApi from one `invoke(channel, input)` transport and one `subscribe`: the preload and the ws bridge share it. */
export function buildKeelApi(
  invoke: (channel: ChannelName, input: unknown) => Promise<IpcResult<unknown>>,
  subscribe: (topic: TopicName, handler: (payload: unknown) => void) => () => void,
): KeelApi {
  const api: Record<string, Record<string, (input?: unknown) => Promise<IpcResult<unknown>>>> = {};
  for (const channel of CHANNEL_NAMES) {
    const [group, method] = splitChannel(channel);
    api[group] ??= {};
    api[group][method] = (input?: unknown) => invoke(channel, input ?? {});
  }
  const topicsKnown = new Set<string>(TOPIC_NAMES);
  const subscribeChecked = (topic: TopicName, handler: (payload: unknown) => void) => {
    if (!topicsKnown.has(topic)) throw new Error(`unknown topic ${String(topic)}`);
    return subscribe(topic, handler);
  };
  return Object.freeze({
    ...Object.fromEntries(Object.entries(api).map(([group, methods]) => [group, Object.freeze(methods)])),
    subscribe: subscribeChecked,
  }) as unknown as KeelApi;
}

/** True when `name` is a channel of the contract (the router rejects anything else). */
export function isChannelName(name: unknown): name is ChannelName {
  return typeof name === 'string' && Object.hasOwn(channels, name);
}

/** True when `name` is a topic of the contract. */
export function isTopicName(name: unknown): name is TopicName {
  return typeof name === 'string' && Object.hasOwn(topics, name);
}

/** The Electron IPC channel of a contract channel (`keel:sessions.list`); the router handles exactly these. */
export function ipcChannelOf(channel: ChannelName): string {
  return `keel:${channel}`;
}

/** The one Electron push channel: main sends `{ topic, payload }` to the window. */
export const IPC_PUSH = 'keel:push';

/** `keel serve`: the WebSocket path; the URL carries the per-launch token as `?token=`. */
export const WS_PATH = '/ws';

/**
 * The largest `keel serve` WebSocket message, browser → main (a prompt is at most 1M characters; files travel in it
 * as base64). The bridge refuses a bigger call in words instead of sending it (the server would drop the link).
 */
export const WS_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** `keel serve` wire format, browser → main: one call. */
export const WsRequest = z.object({
  id: z.number().int().nonnegative(),
  channel: z.string(),
  input: z.unknown(),
});
export type WsRequest = z.infer<typeof WsRequest>;

/** `keel serve` wire format, main → browser: a call's result, or a pushed event. */
export const WsMessage = z.union([
  z.object({
    id: z.number().int().nonnegative(),
    result: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true), value: z.unknown() }),
      z.object({ ok: z.literal(false), error: IpcError }),
    ]),
  }),
  z.object({ topic: z.string(), payload: z.unknown() }),
]);
export type WsMessage = z.infer<typeof WsMessage>;
