import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

/*
 * Issue 37: what the layout tests measure in the page, and where their screenshots go. Screenshots of the main
 * screens at each size are kept by CI as artifacts: test-artifacts/screenshots/ (git-ignored).
 */

export const ARTIFACT_SCREENSHOTS = path.join(REPO_ROOT, 'test-artifacts', 'screenshots');

/**
 * The two window sizes every layout test runs at: a common laptop and a small window, each with the share of
 * the height the transcript keeps at least (in a small window an approval's diff needs some of the half).
 */
export const SIZES = [
  { width: 1280, height: 800, minShare: 0.5 },
  { width: 900, height: 600, minShare: 0.4 },
] as const;

/** Writes test-artifacts/screenshots/<name>-<w>x<h>.png; returns its path. */
export async function artifactScreenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACT_SCREENSHOTS, { recursive: true });
  const size = page.viewportSize();
  const file = path.join(ARTIFACT_SCREENSHOTS, `${name}-${size?.width ?? 0}x${size?.height ?? 0}.png`);
  await page.screenshot({ path: file });
  return file;
}

/**
 * Captures a screen at each of SIZES as `<name>-<w>x<h>.png` and, with `check`, measures its controls there: none
 * covered or cut, at least `atLeast` checked, nothing wider than its box, then `check.also`. Leaves 1280x800.
 */
export async function captureAtSizes(
  page: Page,
  name: string,
  check?: { root: string; atLeast: number; also?: (where: string) => Promise<void> },
): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
    );
    await artifactScreenshot(page, name);
    if (check === undefined) continue;
    const measured = await measureControls(page, check.root);
    const where = `${name} at ${size.width}x${size.height}`;
    expect(measured.covered, where).toEqual([]);
    expect(measured.cut, where).toEqual([]);
    expect(measured.checked, where).toBeGreaterThanOrEqual(check.atLeast);
    // Nothing is wider than the box that holds it: no text cut at an edge, no sideways scrolling.
    expect(await widerThanBox(page, check.root), where).toEqual([]);
    await check.also?.(where);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** What one measurement of the session view found. */
export type LayoutMeasurement = {
  viewport: { width: number; height: number };
  /** The transcript's height over the window's. */
  transcriptShare: number;
  /** The composer's text box and its Send (or Stop) button lie wholly inside the window. */
  composerInView: boolean;
  sendInView: boolean;
  composerHeight: number;
  /** The session title's width in px, and whether its text is cut. */
  titleWidth: number;
  /** Controls (buttons, inputs, summaries) whose visible centre belongs to another element, with what covers them. */
  covered: string[];
  /** How many controls were checked (those whose centre is inside every scrolling box around them). */
  checked: number;
  /** Controls cut by a box that does not scroll (overflow hidden) or by the window's edge: partly unreachable. */
  cut: string[];
  /** The header's height in px. */
  headerHeight: number;
};

/**
 * Measures the open session view: the transcript's share of the height, the composer and Send in view, the
 * title's room, and every visible control hit-tested at its centre (elementFromPoint): a control drawn over by
 * another (Monaco's overview ruler over Allow/Deny, a menu over Send) is listed in `covered`.
 */
export function measureSessionLayout(page: Page): Promise<LayoutMeasurement> {
  return page.evaluate<LayoutMeasurement>(`(${MEASURE_SCRIPT})('.session-view')`);
}

/**
 * The controls check alone, for any screen: every visible control inside `root` (a CSS selector: a dialog, the
 * settings, the session list) hit-tested at its centre and checked for a cut by a box that does not scroll.
 */
export async function measureControls(
  page: Page,
  root: string,
): Promise<Pick<LayoutMeasurement, 'covered' | 'cut' | 'checked'>> {
  const { covered, cut, checked } = await page.evaluate<LayoutMeasurement>(
    `(${MEASURE_SCRIPT})(${JSON.stringify(root)})`,
  );
  return { covered, cut, checked };
}

/**
 * The boxes in `root` (itself included) that clip or scroll and whose contents are wider than they are: text cut
 * at a dialog's edge, or a sideways scroll bar. Form fields (a long value scrolls in its field), labels hidden for
 * screen readers, one-line texts ellipsized on purpose and Monaco's own boxes (a diff scrolls sideways by design)
 * are left out.
 */
export function widerThanBox(page: Page, root: string): Promise<string[]> {
  return page.evaluate<string[]>(`(${WIDER_THAN_BOX})(${JSON.stringify(root)})`);
}

const WIDER_THAN_BOX = `(root) => {
  const box = document.querySelector(root);
  return [box, ...box.querySelectorAll('*')]
    .filter((element) => !['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName))
    .filter((element) => !element.closest('.visually-hidden, .monaco-editor, .xterm'))
    .filter((element) => {
      const style = getComputedStyle(element);
      // A one-line text cut with an ellipsis on purpose (a long title) is not cut by accident.
      return /auto|scroll|hidden|clip/.test(style.overflowX) && style.textOverflow !== 'ellipsis';
    })
    .filter((element) => element.scrollWidth > element.clientWidth + 1)
    .map((element) => element.tagName.toLowerCase() + '.' + element.className + ' ' + element.scrollWidth + ' > ' + element.clientWidth);
}`;

/* The measurement as a script for the page (the tests compile without the DOM's types); `root` holds the controls. */
const MEASURE_SCRIPT = `((root) => {
    const box = (selector) => document.querySelector(selector)?.getBoundingClientRect();
    const width = window.innerWidth;
    const height = window.innerHeight;
    const inView = (rect) =>
      rect !== undefined &&
      rect.width > 0 &&
      rect.height > 0 &&
      rect.top >= 0 &&
      rect.left >= 0 &&
      rect.bottom <= height + 0.5 &&
      rect.right <= width + 0.5;
    const transcript = box('[role="log"][aria-label="Transcript"]');
    const textarea = box('#composer-input');
    const send = [...document.querySelectorAll('form[aria-label="Composer"] button')]
      .find((button) => /^(Send|Stop)$/.test(button.textContent?.trim() ?? ''))
      ?.getBoundingClientRect();
    const title = document.querySelector('.session-heading');
    const describe = (element) => {
      const text = (element.textContent ?? '').trim().slice(0, 40);
      const label = element.getAttribute('aria-label') ?? '';
      return \`\${element.tagName.toLowerCase()}\${element.className ? \`.\${String(element.className).split(' ')[0]}\` : ''}\${
        label ? \`[\${label}]\` : ''
      }\${text ? \` "\${text}"\` : ''}\`;
    };
    // The part of the window where \`element\` can be seen: its rect cut by every box around it that clips.
    const cut = [];
    const visibleCentre = (element) => {
      const rect = element.getBoundingClientRect();
      if (rect.width < 2 || rect.height < 2) return undefined;
      let top = rect.top;
      let bottom = rect.bottom;
      let left = rect.left;
      let right = rect.right;
      let cutBy;
      for (let parent = element.parentElement; parent; parent = parent.parentElement) {
        const style = getComputedStyle(parent);
        if (style.display === 'none' || style.visibility === 'hidden') return undefined;
        // A modal dialog is drawn in the top layer: the boxes around it in the document do not clip it.
        const modal = parent.matches(':modal');
        if (style.overflowX === 'visible' && style.overflowY === 'visible') {
          if (modal) break;
          continue;
        }
        const clip = parent.getBoundingClientRect();
        const scrolls = /auto|scroll/.test(style.overflowY) || /auto|scroll/.test(style.overflowX);
        // What a scrolling box inside this one shows is compared (a control half scrolled out of a list can be
        // scrolled to; the box that holds the list does not cut it).
        if (
          !scrolls &&
          (top < clip.top - 1 || bottom > clip.bottom + 1 || left < clip.left - 1 || right > clip.right + 1)
        )
          cutBy ??= describe(parent);
        top = Math.max(top, clip.top);
        bottom = Math.min(bottom, clip.bottom);
        left = Math.max(left, clip.left);
        right = Math.min(right, clip.right);
        if (modal) break;
      }
      // What the boxes around it show, past the window's edge: a part no scrolling reaches.
      const pastWindow = bottom > height + 1 || right > width + 1;
      top = Math.max(top, 0);
      left = Math.max(left, 0);
      bottom = Math.min(bottom, height);
      right = Math.min(right, width);
      // Wholly scrolled out of its box: not a control the user can see, so not one that can be covered.
      if (bottom - top < 2 || right - left < 2) return undefined;
      if (cutBy || pastWindow)
        cut.push(\`\${describe(element)} cut by \${cutBy ?? 'the window'}\`);
      // Mostly cut: the centre of the visible part is still where a click lands.
      return { x: (left + right) / 2, y: (top + bottom) / 2 };
    };
    const covered = [];
    let checked = 0;
    const controls = document.querySelectorAll(
      ['button', 'input', 'select', 'textarea', 'summary'].map((tag) => \`\${root} \${tag}\`).join(', '),
    );
    for (const control of controls) {
      if (control.type === 'hidden' || control.closest('.visually-hidden')) continue;
      // Monaco's own hidden inputs are not controls people use.
      if (control.closest('.monaco-editor') && control.tagName === 'TEXTAREA') continue;
      const centre = visibleCentre(control);
      if (!centre) continue;
      checked += 1;
      const hit = document.elementFromPoint(centre.x, centre.y);
      // The control itself, a part of it, or what wraps it (a checkbox's label) is hit: it is not covered.
      if (hit && (hit === control || control.contains(hit) || hit.contains(control))) continue;
      covered.push(\`\${describe(control)} under \${hit ? describe(hit) : 'nothing'}\`);
    }
    return {
      viewport: { width, height },
      transcriptShare: transcript ? transcript.height / height : 0,
      composerInView: inView(textarea),
      sendInView: inView(send),
      composerHeight: textarea?.height ?? 0,
      titleWidth: title?.getBoundingClientRect().width ?? 0,
      covered,
      checked,
      cut,
      headerHeight: box('.session-header')?.height ?? 0,
    };
})`;
