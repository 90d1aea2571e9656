import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useLayoutEffect, useMemo, useRef, type JSX } from 'react';
import { AssistantBubble, UserBubble } from './items/MessageBubbles.js';
import { LiveBubble } from './items/LiveBubble.js';
import {
  CompactionMarker,
  ErrorRow,
  InstructionsMarker,
  ModelSwitchRow,
  NoteRow,
  SessionStartRow,
  StopRow,
} from './items/MarkerRows.js';
import { RewoundMarker } from './items/RewoundMarker.js';
import { CommitActions, SnapshotActions, UserMessageActions } from './history/HistoryRowActions.js';
import type { HistoryActions } from './history/useHistoryActions.js';
import { ToolCallCard } from './items/ToolCallCard.js';
import { ToolImages } from './items/ToolImages.js';
import type { TranscriptItem } from './transcriptItems.js';
import type { LiveReplyStore } from './liveReply.js';

type Row = TranscriptItem | { type: 'live'; key: 'live' } | { type: 'earlier'; key: 'earlier' };

type Props = {
  /** The session shown: its tool results' images are fetched from it (artifacts.image). */
  sessionId?: string | undefined;
  items: readonly TranscriptItem[];
  live: LiveReplyStore;
  streaming: boolean;
  running: boolean;
  toolOutput: ReadonlyMap<string, string>;
  hasBefore: boolean;
  onLoadEarlier: () => void;
  /** Undo / rewind / fork buttons on commits and user messages; absent where the session cannot change. */
  history?: HistoryActions | undefined;
};

/** How close to the bottom (px) still counts as "following" the stream. */
const FOLLOW_SLACK = 48;

const ESTIMATES: Record<Row['type'], number> = {
  session_start: 40,
  user: 90,
  assistant: 160,
  tool: 110,
  compaction: 40,
  model_changed: 36,
  instructions: 36,
  error: 44,
  note: 32,
  stop: 44,
  commit: 52,
  snapshot: 52,
  rewound: 40,
  live: 90,
  earlier: 44,
};

/**
 * The transcript, virtualized (only rows near the viewport exist in the DOM, so 10k events scroll
 * smoothly). It follows the bottom while the user is there, and stays put once they scroll up.
 */
export function Transcript({
  sessionId,
  items,
  live,
  streaming,
  running,
  toolOutput,
  hasBefore,
  onLoadEarlier,
  history,
}: Props): JSX.Element {
  const scrollRef = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const rows = useMemo<Row[]>(() => {
    const all: Row[] = hasBefore ? [{ type: 'earlier', key: 'earlier' }] : [];
    all.push(...items);
    if (streaming || running) all.push({ type: 'live', key: 'live' });
    return all;
  }, [items, streaming, running, hasBefore]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => ESTIMATES[rows[index]?.type ?? 'note'],
    getItemKey: (index) => rows[index]?.key ?? index,
    overscan: 4,
    paddingStart: 12,
    paddingEnd: 24,
  });

  const totalSize = virtualizer.getTotalSize();
  const stickToBottom = useCallback(() => {
    const element = scrollRef.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, []);
  useLayoutEffect(stickToBottom, [stickToBottom, totalSize, rows.length]);

  // The row at the top of the viewport and how far above it the viewport starts: when older events
  // are prepended, the same row is put back at the same place.
  const anchor = useRef<{ key: Row['key']; offset: number } | undefined>(undefined);
  const rememberAnchor = () => {
    const element = scrollRef.current;
    const top = virtualizer.getVirtualItems().find((item) => item.end > (element?.scrollTop ?? 0));
    const row = top ? rows[top.index] : undefined;
    anchor.current =
      top && row && element ? { key: row.key, offset: element.scrollTop - top.start } : undefined;
  };
  const firstKey = rows[0]?.key;
  useLayoutEffect(() => {
    const element = scrollRef.current;
    const saved = anchor.current;
    if (!element || !saved || following.current) return;
    const index = rows.findIndex((row) => row.key === saved.key);
    const target = index < 0 ? undefined : virtualizer.getOffsetForIndex(index, 'start');
    if (target) element.scrollTop = target[0] + saved.offset;
    // Only a change of the first row (a prepend) moves the view; appends leave it alone.
  }, [firstKey]);

  const onScroll = () => {
    const element = scrollRef.current;
    if (!element) return;
    following.current = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_SLACK;
    rememberAnchor();
  };

  return (
    <div
      ref={scrollRef}
      className="transcript"
      role="log"
      aria-label="Transcript"
      aria-live="off"
      tabIndex={0}
      onScroll={onScroll}
    >
      <div className="virtual-space" style={{ height: totalSize }}>
        {virtualizer.getVirtualItems().map((virtualRow) => {
          const row = rows[virtualRow.index];
          if (!row) return null;
          return (
            <div
              key={virtualRow.key}
              data-index={virtualRow.index}
              ref={virtualizer.measureElement}
              className="virtual-row transcript-row"
              style={{ transform: `translateY(${virtualRow.start}px)` }}
            >
              {renderRow(row, { sessionId, live, running, toolOutput, onLoadEarlier, history })}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function renderRow(
  row: Row,
  context: Pick<Props, 'sessionId' | 'live' | 'running' | 'toolOutput' | 'onLoadEarlier' | 'history'>,
): JSX.Element {
  switch (row.type) {
    case 'earlier':
      return (
        <div className="marker marker-earlier">
          <button type="button" onClick={context.onLoadEarlier}>
            Load earlier events
          </button>
        </div>
      );
    case 'live':
      return <LiveBubble store={context.live} />;
    case 'session_start':
      return <SessionStartRow event={row.event} />;
    case 'user':
      return (
        <>
          <UserBubble content={row.content} at={row.at} />
          {row.images && context.sessionId ? (
            <ToolImages sessionId={context.sessionId} tool="your message" images={row.images} />
          ) : null}
          {context.history ? <UserMessageActions seq={row.seq} actions={context.history} /> : null}
        </>
      );
    case 'assistant':
      return (
        <AssistantBubble
          content={row.content}
          at={row.at}
          {...(row.reasoning !== undefined ? { reasoning: row.reasoning } : {})}
          {...(row.model ? { model: row.model } : {})}
          {...(row.interrupted ? { interrupted: row.interrupted } : {})}
        />
      );
    case 'tool':
      return (
        <ToolCallCard
          item={row}
          liveOutput={context.toolOutput.get(row.toolCallId)}
          sessionRunning={context.running}
          sessionId={context.sessionId}
        />
      );
    case 'compaction':
      return <CompactionMarker event={row.event} />;
    case 'model_changed':
      return <ModelSwitchRow event={row.event} />;
    case 'instructions':
      return <InstructionsMarker event={row.event} />;
    case 'error':
      return <ErrorRow message={row.message} at={row.at} {...(row.code ? { code: row.code } : {})} />;
    case 'note':
      return <NoteRow text={row.text} at={row.at} />;
    case 'stop':
      return <StopRow stop={row.stop} at={row.at} />;
    case 'commit':
      return (
        <>
          <NoteRow text={row.text} at={row.at} />
          {context.history ? (
            <CommitActions
              seq={row.seq}
              {...(row.turn !== undefined ? { turn: row.turn } : {})}
              actions={context.history}
            />
          ) : null}
        </>
      );
    case 'snapshot':
      return (
        <>
          <NoteRow text={row.text} at={row.at} />
          {context.history ? <SnapshotActions seq={row.seq} actions={context.history} /> : null}
        </>
      );
    case 'rewound':
      return (
        <RewoundMarker
          toSeq={row.toSeq}
          {...(row.cause ? { cause: row.cause } : {})}
          count={row.setAside.length}
          renderSetAside={() =>
            row.setAside.map((item) => (
              <div key={item.key} className="transcript-row set-aside">
                {/* The abandoned branch is for reading: no undo, rewind or fork from inside it. */}
                {renderRow(item, { ...context, history: undefined })}
              </div>
            ))
          }
        />
      );
  }
}
