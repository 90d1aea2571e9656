import { useEffect, useState, type JSX, type RefObject } from 'react';
import { call, describeError } from '../../../api/call.js';
import { keel } from '../../../api/keel.js';
import './planMode.css';

/**
 * Issue #30: the composer's mode toggle. Plan mode on: the next prompts plan (the model reads and presents a
 * plan for approval). Shift+Tab in the message box switches it, as in Claude Code. The mode is the log's
 * (plan.setMode records plan_mode_changed); an approved plan turns it off.
 */
export function PlanModeToggle({
  sessionId,
  active,
  disabled,
  inputRef,
  onChanged,
}: {
  sessionId: string;
  active: boolean;
  disabled: boolean;
  /** The message box: Shift+Tab there switches the mode. */
  inputRef: RefObject<HTMLTextAreaElement | null>;
  onChanged: () => void;
}): JSX.Element {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const toggle = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await call(keel().plan.setMode({ sessionId, active: !active }));
      onChanged();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const input = inputRef.current;
    if (!input || disabled) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Tab' || !event.shiftKey) return;
      event.preventDefault();
      void toggle();
    };
    input.addEventListener('keydown', onKey);
    return () => input.removeEventListener('keydown', onKey);
  });

  return (
    <div className="plan-mode-toggle">
      <button
        type="button"
        aria-pressed={active}
        className={active ? 'plan-mode-on' : 'button-secondary'}
        disabled={disabled || busy}
        title="Plan mode: the model reads and presents a plan before changing anything (Shift+Tab)"
        onClick={() => void toggle()}
      >
        {active ? 'Plan mode: on' : 'Plan mode: off'}
      </button>
      {error ? (
        <span className="error-text" role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}
