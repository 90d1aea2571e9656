import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { TopicPayload } from '../../../../main/ipc/contract.js';
import type { SessionEvent } from '../../api/types.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';
import { LiveReplyStore } from './liveReply.js';

/** Events per request (the contract's maximum). */
const PAGE = 5000;
/** The newest events shown first, so even a huge session opens at once. */
const FIRST_PAGE = 400;
/** How many events are loaded without asking (in the background after the first page); older ones on demand. */
const INITIAL = 10_000;
/** Live command output kept per tool call (the tail). */
const OUTPUT_TAIL = 20_000;

/** A session's events as they are committed, plus what streams before it is committed. */
export type TranscriptState = {
  events: SessionEvent[];
  loading: boolean;
  error: string | undefined;
  /** Older events exist that are not loaded. */
  hasBefore: boolean;
  loadEarlier: () => void;
  /** The reply streaming now; read it with useLiveReply (only the live bubble re-renders per delta). */
  live: LiveReplyStore;
  /** True while a streamed reply is shown (from its first delta until its event is committed). */
  streaming: boolean;
  /** Live output of running commands, by tool call id. */
  toolOutput: ReadonlyMap<string, string>;
  /** The newest turn notice (a retry), cleared when the turn ends. */
  notice: string | undefined;
  retry: () => void;
};

/**
 * Loads the newest events of a session (up to 10,000, older on demand), then appends every
 * committed event pushed for it in seq order (a gap is filled by a page read), and streams the
 * in-progress reply from turn deltas until its event is committed.
 */
export function useTranscript(sessionId: string): TranscriptState {
  const [events, setEvents] = useState<SessionEvent[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const [hasBefore, setHasBefore] = useState(false);
  const live = useMemo(() => new LiveReplyStore(), []);
  const [streaming, setStreaming] = useState(false);
  const clearLive = useCallback(() => {
    live.set(undefined);
    setStreaming(false);
  }, [live]);
  const [toolOutput, setToolOutput] = useState<ReadonlyMap<string, string>>(new Map());
  const [notice, setNotice] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
  const lastSeq = useRef(0);
  const ready = useRef(false);
  const pending = useRef<SessionEvent[]>([]);
  const catchingUp = useRef(false);
  const loadingEarlier = useRef(false);

  const applyNew = useCallback(
    (incoming: readonly SessionEvent[]) => {
      const fresh = incoming.filter((event) => event.seq > lastSeq.current).sort((a, b) => a.seq - b.seq);
      if (fresh.length === 0) return;
      const first = fresh[0];
      if (first && first.seq !== lastSeq.current + 1) {
        // A push was missed (or arrived before the page): read the gap from the log, in order.
        pending.current.push(...fresh);
        if (catchingUp.current) return;
        catchingUp.current = true;
        void call(keel().events.page({ sessionId, fromSeq: lastSeq.current + 1, limit: PAGE }))
          .then((page) => {
            catchingUp.current = false;
            const queued = pending.current;
            pending.current = [];
            applyNew([...page.events, ...queued]);
          })
          .catch((failure: unknown) => {
            catchingUp.current = false;
            setError(describeError(failure));
          });
        return;
      }
      const contiguous: SessionEvent[] = [];
      for (const event of fresh) {
        if (event.seq === lastSeq.current + 1) {
          contiguous.push(event);
          lastSeq.current = event.seq;
        }
      }
      setEvents((previous) => [...previous, ...contiguous]);
      if (contiguous.some((event) => ['assistant_message', 'interrupted', 'error'].includes(event.kind))) {
        clearLive();
      }
      const rest = fresh.filter((event) => event.seq > lastSeq.current);
      if (rest.length > 0) applyNew(rest);
    },
    [sessionId, clearLive],
  );

  useEffect(() => {
    let cancelled = false;
    ready.current = false;
    pending.current = [];
    lastSeq.current = 0;
    setLoading(true);
    setError(undefined);
    setEvents([]);
    clearLive();
    setToolOutput(new Map());
    void (async () => {
      try {
        const newest = await call(keel().events.page({ sessionId, limit: FIRST_PAGE }));
        if (cancelled) return;
        lastSeq.current = newest.events.at(-1)?.seq ?? 0;
        ready.current = true;
        setEvents(newest.events);
        setHasBefore(newest.hasBefore);
        setLoading(false);
        const queued = pending.current;
        pending.current = [];
        if (queued.length > 0) applyNew(queued);
        // Backfill older events while the newest are already on screen (the transcript keeps its place).
        let first = newest.events[0]?.seq;
        let loaded = newest.events.length;
        let before = newest.hasBefore;
        while (before && loaded < INITIAL && first !== undefined) {
          const older = await call(
            keel().events.page({ sessionId, beforeSeq: first, limit: Math.min(PAGE, INITIAL - loaded) }),
          );
          if (cancelled) return;
          const boundary = first;
          setEvents((previous) => [...older.events.filter((event) => event.seq < boundary), ...previous]);
          first = older.events[0]?.seq;
          loaded += older.events.length;
          before = older.hasBefore;
          setHasBefore(before);
        }
      } catch (failure) {
        if (cancelled) return;
        setError(describeError(failure));
        setLoading(false);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [sessionId, attempt, applyNew, clearLive]);

  const loadEarlier = useCallback(() => {
    const first = events[0];
    if (loadingEarlier.current || !first) return;
    loadingEarlier.current = true;
    void call(keel().events.page({ sessionId, beforeSeq: first.seq, limit: PAGE }))
      .then((page) => {
        setEvents((previous) => [
          ...page.events.filter((event) => event.seq < (previous[0]?.seq ?? Infinity)),
          ...previous,
        ]);
        setHasBefore(page.hasBefore);
      })
      .catch((failure: unknown) => setError(describeError(failure)))
      .finally(() => {
        loadingEarlier.current = false;
      });
  }, [events, sessionId]);

  useSubscription('event.appended', (payload: TopicPayload<'event.appended'>) => {
    if (payload.sessionId !== sessionId) return;
    if (!ready.current) pending.current.push(payload.event);
    else applyNew([payload.event]);
  });

  useSubscription('turn.delta', ({ sessionId: id, turnId, delta }) => {
    if (id !== sessionId) return;
    const previous = live.get();
    const base =
      previous && previous.turnId === turnId ? previous : { turnId, text: '', reasoning: '', toolCalls: [] };
    live.set(
      delta.type === 'text'
        ? { ...base, text: base.text + delta.text }
        : delta.type === 'reasoning'
          ? { ...base, reasoning: base.reasoning + delta.text }
          : { ...base, toolCalls: [...base.toolCalls, { id: delta.id, name: delta.name }] },
    );
    if (!previous) setStreaming(true);
  });

  useSubscription('tool.output', ({ sessionId: id, toolCallId, chunk }) => {
    if (id !== sessionId) return;
    setToolOutput((previous) => {
      const next = new Map(previous);
      next.set(toolCallId, ((previous.get(toolCallId) ?? '') + chunk).slice(-OUTPUT_TAIL));
      return next;
    });
  });

  useSubscription('turn.notice', ({ sessionId: id, text }) => {
    if (id === sessionId) setNotice(text);
  });

  useSubscription('session.status', ({ sessionId: id, running }) => {
    if (id !== sessionId || running) return;
    clearLive();
    setNotice(undefined);
  });

  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return { events, loading, error, hasBefore, loadEarlier, live, streaming, toolOutput, notice, retry };
}
