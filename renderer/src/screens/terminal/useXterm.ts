import '@xterm/xterm/css/xterm.css';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal, type ITheme } from '@xterm/xterm';
import { useEffect, useRef, useState, type RefObject } from 'react';

/** Lines kept above the screen: a 100,000-line flood keeps its last 10,000. */
const SCROLLBACK = 10_000;

/** One dark palette in both themes: command output is written for dark terminals more often than not. */
const THEME: ITheme = {
  background: '#14171b',
  foreground: '#d6dbe1',
  cursor: '#d6dbe1',
  selectionBackground: '#3b4a63',
  black: '#1e2227',
  red: '#f0716f',
  green: '#8fd68a',
  yellow: '#e9c46a',
  blue: '#6fa8ff',
  magenta: '#d38cf2',
  cyan: '#5fd4d4',
  white: '#d6dbe1',
  brightBlack: '#6b7480',
  brightRed: '#ff8f8d',
  brightGreen: '#a7e8a2',
  brightYellow: '#f5d58a',
  brightBlue: '#93bcff',
  brightMagenta: '#e2abf7',
  brightCyan: '#86e6e6',
  brightWhite: '#ffffff',
};

/** An xterm.js terminal mounted in the returned element, fitted to it whenever it is visible and resized. */
export type Xterm = {
  ref: RefObject<HTMLDivElement | null>;
  /** Undefined until mounted. */
  terminal: Terminal | undefined;
  /** Fits the terminal to its element now; undefined while it is hidden. */
  fit: () => { cols: number; rows: number } | undefined;
};

/**
 * Creates one xterm.js terminal for the component's life (disposed on unmount): dark theme, 10,000 lines of
 * scrollback, `\n` treated as a new line (replayed excerpts have no `\r`). `input` false hides the cursor
 * and ignores keystrokes (command output); `onResize` hears every fit that changed the size.
 */
export function useXterm(options: {
  input: boolean;
  onResize?: (cols: number, rows: number) => void;
}): Xterm {
  const ref = useRef<HTMLDivElement>(null);
  const [terminal, setTerminal] = useState<Terminal | undefined>();
  const fitRef = useRef<FitAddon | undefined>(undefined);
  const onResize = useRef(options.onResize);
  onResize.current = options.onResize;

  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const term = new Terminal({
      scrollback: SCROLLBACK,
      convertEol: true,
      cursorBlink: options.input,
      disableStdin: !options.input,
      cursorInactiveStyle: options.input ? 'outline' : 'none',
      fontFamily: getComputedStyle(document.body).getPropertyValue('--mono').trim() || 'monospace',
      fontSize: 12.5,
      theme: THEME,
      allowProposedApi: false,
    });
    const fitAddon = new FitAddon();
    term.loadAddon(fitAddon);
    term.open(element);
    fitRef.current = fitAddon;
    let last = '';
    const fitNow = () => {
      if (element.clientWidth === 0 || element.clientHeight === 0) return;
      fitAddon.fit();
      const size = `${term.cols}x${term.rows}`;
      if (size !== last) {
        last = size;
        onResize.current?.(term.cols, term.rows);
      }
    };
    fitNow();
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(fitNow);
    });
    observer.observe(element);
    setTerminal(term);
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
      fitRef.current = undefined;
      term.dispose();
      setTerminal(undefined);
    };
    // One terminal per mount: its options are fixed at creation.
  }, []);

  return {
    ref,
    terminal,
    fit: () => {
      const element = ref.current;
      const fitAddon = fitRef.current;
      if (!element || !fitAddon || !terminal || element.clientWidth === 0) return undefined;
      fitAddon.fit();
      return { cols: terminal.cols, rows: terminal.rows };
    },
  };
}
