import { Component, type ErrorInfo, type ReactNode } from 'react';
import { describeError } from '../api/call.js';

type Props = { children: ReactNode; label: string };
type State = { message: string | undefined };

/** Keeps a crash in one view from blanking the window: shows a sentence and a way back, never a stack. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { message: undefined };

  static getDerivedStateFromError(error: unknown): State {
    return { message: describeError(error) };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    // The console is for developers; the user sees only the sentence.
    console.error(`keel: ${this.props.label} failed`, error, info.componentStack);
  }

  override render(): ReactNode {
    if (this.state.message === undefined) return this.props.children;
    return (
      <div className="state state-error" role="alert">
        <p>
          The {this.props.label} stopped working: {this.state.message}
        </p>
        <button type="button" onClick={() => this.setState({ message: undefined })}>
          Show it again
        </button>
      </div>
    );
  }
}
