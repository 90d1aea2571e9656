import { useRef, type JSX, type KeyboardEvent, type PointerEvent } from 'react';

const MIN = 20;
const MAX = 80;
const STEP = 5;

/**
 * The handle between the conversation and what is below it (a pending approval): drag it, or use ↑/↓, to give
 * the approval's diff more height or the conversation back its share. `value` is the transcript's least share
 * of the session view in percent (undefined: the layout's default, 50%, 40% in a short window).
 */
export function FooterSplitter({
  value,
  onChange,
}: {
  value: number | undefined;
  onChange: (percent: number | undefined) => void;
}): JSX.Element {
  const drag = useRef<{ startY: number; startShare: number; viewHeight: number } | undefined>(undefined);
  const clamp = (percent: number) => Math.round(Math.min(MAX, Math.max(MIN, percent)));
  const currentShare = (handle: HTMLElement) => {
    const view = handle.closest('.session-view');
    const transcript = view?.querySelector('.transcript');
    if (!view || !transcript) return { share: 50, viewHeight: 1 };
    const viewHeight = view.getBoundingClientRect().height || 1;
    return { share: (transcript.getBoundingClientRect().height / viewHeight) * 100, viewHeight };
  };
  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    event.preventDefault();
    event.currentTarget.setPointerCapture(event.pointerId);
    const { share, viewHeight } = currentShare(event.currentTarget);
    drag.current = { startY: event.clientY, startShare: share, viewHeight };
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    const start = drag.current;
    if (!start) return;
    onChange(clamp(start.startShare + ((event.clientY - start.startY) / start.viewHeight) * 100));
  };
  const onPointerUp = () => {
    drag.current = undefined;
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const share = value ?? currentShare(event.currentTarget).share;
    if (event.key === 'ArrowUp') onChange(clamp(share - STEP));
    else if (event.key === 'ArrowDown') onChange(clamp(share + STEP));
    else if (event.key === 'Home') onChange(undefined);
    else return;
    event.preventDefault();
  };
  return (
    <div
      className="footer-splitter"
      role="separator"
      aria-orientation="horizontal"
      aria-label="Resize the approval: drag up for more diff, down for more conversation"
      aria-valuemin={MIN}
      aria-valuemax={MAX}
      aria-valuenow={value ?? 50}
      tabIndex={0}
      title="Drag to resize (↑/↓ from the keyboard; double-click resets)"
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={onPointerUp}
      onDoubleClick={() => onChange(undefined)}
      onKeyDown={onKeyDown}
    />
  );
}
