import type { Theme } from '../../../main/ipc/contract.js';

/*
 * Issue #37: the theme. The CSS variables are `light-dark()` pairs (styles/base.css) resolved by the root's
 * `color-scheme`: `system` leaves it `light dark` (the OS's prefers-color-scheme decides), `light` and `dark`
 * pin it through `data-theme` on <html>. The few canvases CSS cannot reach (Monaco) ask `isDarkTheme()`.
 */

const CHANGED = 'keel-theme-changed';
const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');

/** Sets the page's theme (settings.json `appearance.theme`). */
export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (root.dataset.theme === theme) return;
  root.dataset.theme = theme;
  window.dispatchEvent(new Event(CHANGED));
}

/** Whether the page is dark now: the chosen theme, or the OS's for `system`. */
export function isDarkTheme(): boolean {
  const theme = document.documentElement.dataset.theme;
  if (theme === 'dark') return true;
  if (theme === 'light') return false;
  return darkQuery().matches;
}

/** Calls `listener` when the page may have turned dark or light (a choice, or the OS for `system`). */
export function subscribeTheme(listener: () => void): () => void {
  const query = darkQuery();
  query.addEventListener('change', listener);
  window.addEventListener(CHANGED, listener);
  return () => {
    query.removeEventListener('change', listener);
    window.removeEventListener(CHANGED, listener);
  };
}
