import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

/*
 * No import cycle anywhere in main/: every file's imports (type-only and dynamic ones too, as the TypeScript
 * compiler lists them) form a graph without a loop, so each module can be read, tested and moved from the
 * bottom up. A cycle fails here with its files named.
 */

const MAIN = path.join(REPO_ROOT, 'main');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources), or undefined. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), `${base}.ts`, base];
  return candidates.find((file) => fs.statSync(file, { throwIfNoEntry: false })?.isFile());
}

/** main/'s import graph, repo-relative; `extra` prepends an import to a file's text (to prove the check). */
function importGraph(extra: Record<string, string> = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(MAIN)) {
    const name = path.relative(REPO_ROOT, file);
    const text = `${extra[name] ?? ''}\n${fs.readFileSync(file, 'utf8')}`;
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const targets = importedFiles
      .map((imported) => resolve(file, imported.fileName))
      .filter((target): target is string => target !== undefined)
      .map((target) => path.relative(REPO_ROOT, target));
    graph.set(name, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each as one cycle through them. */
function cyclesOf(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) cycles.push(component.sort().join(' -> '));
    else if ((graph.get(file) ?? []).includes(file)) cycles.push(`${file} -> itself`);
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles;
}

describe('import cycles', () => {
  it('main/ has none (type-only and dynamic imports count)', () => {
    expect(cyclesOf(importGraph())).toEqual([]);
  });

  it('names the files of a cycle, type-only and dynamic imports included', () => {
    expect(
      cyclesOf(
        importGraph({ 'main/store/indexRows.ts': "import type { SessionIndex } from './sessionIndex.js';" }),
      ),
    ).toEqual(['main/store/indexRows.ts -> main/store/sessionIndex.ts']);
    expect(
      cyclesOf(importGraph({ 'main/common/clock.ts': "const late = import('../common/clock.js');" })),
    ).toEqual(['main/common/clock.ts -> itself']);
  });
});
