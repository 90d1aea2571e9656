import type { JSX, ReactNode } from 'react';

/** A quiet "loading" line; announced politely to screen readers. */
export function LoadingState({ label = 'Loading…' }: { label?: string }): JSX.Element {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** An error sentence with an optional retry; never a stack trace. */
export function ErrorState({ message, onRetry }: { message: string; onRetry?: () => void }): JSX.Element {
  return (
    <div className="state state-error" role="alert">
      <p>{message}</p>
      {onRetry ? (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** What a screen says when there is nothing to show, and what to do about it. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }): JSX.Element {
  return (
    <div className="state state-empty">
      <p className="state-title">{title}</p>
      {children}
    </div>
  );
}
