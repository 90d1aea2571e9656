import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** `<userData>/window-state.json`: where the window was and how big, restored at the next launch. */
export const WINDOW_STATE_FILE = 'window-state.json';

/** The smallest window the UI is laid out for. */
export const MIN_WINDOW = { width: 800, height: 560 } as const;
const DEFAULT_WINDOW = { width: 1280, height: 820 } as const;

/** A rectangle in screen coordinates (Electron's Rectangle). */
export type Rect = { x: number; y: number; width: number; height: number };

const WindowState = z.object({
  x: z.number().int().optional(),
  y: z.number().int().optional(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  maximized: z.boolean().default(false),
});
/** What is saved: bounds (position optional) and whether the window was maximized. */
export type WindowState = z.infer<typeof WindowState>;

/** The saved state, or the default size when there is none or it is unreadable. */
export function readWindowState(userData: string): WindowState {
  try {
    const parsed = WindowState.safeParse(
      JSON.parse(fs.readFileSync(path.join(userData, WINDOW_STATE_FILE), 'utf8')),
    );
    if (parsed.success) return parsed.data;
  } catch {
    // First launch or a damaged file: start with the default.
  }
  return { ...DEFAULT_WINDOW, maximized: false };
}

/** Saves the state atomically (a crash mid-write leaves the previous file). */
export function writeWindowState(userData: string, state: WindowState): void {
  fs.mkdirSync(userData, { recursive: true });
  const file = path.join(userData, WINDOW_STATE_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(WindowState.parse(state))}\n`);
  fs.renameSync(temp, file);
}

function overlap(a: Rect, b: Rect): number {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return width > 0 && height > 0 ? width * height : 0;
}

/**
 * Makes a saved state fit today's displays: at least MIN_WINDOW, at most the largest work area, and the
 * position kept only when a good part of the title bar area is on some display (else the window is centered).
 */
export function fitWindowState(state: WindowState, workAreas: readonly Rect[]): WindowState {
  const largest = workAreas.reduce<Rect | undefined>(
    (best, area) => (best && best.width * best.height >= area.width * area.height ? best : area),
    undefined,
  );
  const maxWidth = largest?.width ?? state.width;
  const maxHeight = largest?.height ?? state.height;
  const width = Math.max(MIN_WINDOW.width, Math.min(state.width, maxWidth));
  const height = Math.max(MIN_WINDOW.height, Math.min(state.height, maxHeight));
  const fitted: WindowState = { width, height, maximized: state.maximized };
  if (state.x === undefined || state.y === undefined) return fitted;
  // The top strip of the window (where it is dragged from) must be visible on a display.
  const strip: Rect = { x: state.x, y: state.y, width, height: 40 };
  const visible = workAreas.some((area) => overlap(strip, area) >= Math.min(strip.width, 200) * 20);
  return visible ? { ...fitted, x: state.x, y: state.y } : fitted;
}
