import type { TurnReports } from '../core/harness/index.js';
import { topics, type TopicName, type TopicPayload } from './contract.js';

/** One pushed event as transports forward it. */
export type Push = { [T in TopicName]: { topic: T; payload: TopicPayload<T> } }[TopicName];

/** A transport's listener: called synchronously for every push, in publish order. */
export type PushListener = (push: Push) => void;

/** The publish/subscribe hub between the handlers and the transports (Electron windows, WebSocket clients). */
export type Hub = {
  /** Validates `payload` against the topic's schema and hands it to every listener; an invalid payload is dropped with a warning. */
  publish<T extends TopicName>(topic: T, payload: TopicPayload<T>): void;
  /** Adds a listener for every topic; returns the function that removes it. */
  subscribe(listener: PushListener): () => void;
  /** How many listeners are attached (tests, diagnostics). */
  readonly size: number;
};

/** Creates a hub. A listener that throws is reported and does not stop the others. */
export function createHub(): Hub {
  const listeners = new Set<PushListener>();
  return {
    publish(topic, payload) {
      const parsed = topics[topic].safeParse(payload);
      if (!parsed.success) {
        process.emitWarning(`keel: dropped a ${topic} push outside the contract: ${parsed.error.message}`);
        return;
      }
      const push = { topic, payload: parsed.data } as Push;
      for (const listener of [...listeners]) {
        try {
          listener(push);
        } catch (error) {
          process.emitWarning(`keel: a ${topic} listener failed: ${String(error)}`);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    get size() {
      return listeners.size;
    },
  };
}

/** A turn manager's reports as the hub's pushes (a delta is stamped with the time it is sent). */
export function hubReports(hub: Hub): TurnReports {
  return {
    event: (sessionId, event) => hub.publish('event.appended', { sessionId, event }),
    output: (sessionId, turnId, toolCallId, chunk) =>
      hub.publish('tool.output', { sessionId, turnId, toolCallId, chunk }),
    delta: (sessionId, turnId, delta) =>
      hub.publish('turn.delta', { sessionId, turnId, delta, sentAt: Date.now() }),
    notice: (sessionId, turnId, text) => hub.publish('turn.notice', { sessionId, turnId, text }),
    changed: (sessionId) => hub.publish('sessions.changed', { sessionId, change: 'updated' }),
    status: (sessionId, status) => hub.publish('session.status', { sessionId, ...status }),
  };
}
