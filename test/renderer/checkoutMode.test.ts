import { describe, expect, it } from 'vitest';

// Renderer modules are compiled by tsconfig.web.json, not the Node project these tests type-check in: the
// module is loaded at run time and described here by the shapes this test relies on.
type Checkout = { dir: string; commit: 'auto' | 'manual'; readOnly: boolean };
type Uncommitted = Checkout & { files: unknown[] };
type Summary = { mode: string; label: string; tooltip: string; uncommitted: number | undefined };
const modulePath = '../../renderer/src/screens/session/checkoutMode.js';
const { describeCheckoutMode } = (await import(/* @vite-ignore */ modulePath)) as {
  describeCheckoutMode: (dirs: Checkout[], uncommitted?: Uncommitted[]) => Summary;
};

const project = (commit: 'auto' | 'manual', readOnly = false): Checkout => ({
  dir: 'project',
  commit,
  readOnly,
});
const files = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ path: `f${i}`, status: 'added' }));

describe("the session header's checkout mode", () => {
  it('says how changes reach the folder for each way a session is created', () => {
    const auto = describeCheckoutMode([project('auto')]);
    expect(auto).toMatchObject({ mode: 'auto', label: 'Checkout · applies when each turn ends' });
    expect(auto.tooltip).toMatch(/When each turn ends, the turn's changes are merged into the folder/);
    const manual = describeCheckoutMode([project('manual')]);
    expect(manual).toMatchObject({ mode: 'manual', label: 'Checkout · review, then apply' });
    expect(manual.tooltip).toMatch(/only when you apply them in Changes/);
    const direct = describeCheckoutMode([]);
    expect(direct).toMatchObject({ mode: 'direct', label: 'Edits the folder directly' });
    expect(direct.tooltip).toMatch(/^No checkout: the agent writes into the folder itself/);
    expect(describeCheckoutMode([project('auto', true)])).toMatchObject({
      mode: 'read-only',
      label: 'Checkout · read-only',
    });
  });

  it('counts the files waiting for review in writable manual dirs once the changes are read', () => {
    const dirs = [project('manual'), { dir: 'notes', commit: 'auto' as const, readOnly: false }];
    expect(describeCheckoutMode(dirs).uncommitted).toBeUndefined();
    const summary = describeCheckoutMode(dirs, [
      { ...project('manual'), files: files(2) },
      { dir: 'notes', commit: 'auto', readOnly: false, files: files(5) },
      { dir: 'docs', commit: 'manual', readOnly: true, files: files(7) },
    ]);
    expect(summary).toMatchObject({ mode: 'manual', uncommitted: 2 });
    // With several dirs the tooltip names each one's own mode.
    expect(summary.tooltip).toMatch(/\n\nproject: review, then apply\nnotes: applies when each turn ends$/);
    // An auto session shows no count: its changes are applied without review.
    expect(
      describeCheckoutMode([project('auto')], [{ ...project('auto'), files: files(3) }]).uncommitted,
    ).toBe(undefined);
  });
});
