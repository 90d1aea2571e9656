import type { ChannelArgs, ChannelOutput, TopicPayload } from '../../../main/ipc/contract.js';

/*
 * Types the renderer needs, derived from the contract (the renderer may import nothing else from main).
 */

/** One committed event of a session log. */
export type SessionEvent = TopicPayload<'event.appended'>['event'];

/** One event kind's shape. */
export type EventOf<K extends SessionEvent['kind']> = Extract<SessionEvent, { kind: K }>;

/** anthropic | openai | openai-compatible */
export type ProviderKind = ChannelArgs<'sessions.create'>['provider'];

/** read-only | ask | auto-edit | full-auto */
export type Policy = ChannelArgs<'sessions.create'>['policy'];

/** The names of the provider keys in settings.set / settings.get. */
export type KeyName = keyof ChannelOutput<'settings.get'>['keys'];
