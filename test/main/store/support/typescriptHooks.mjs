// Node module hooks that let a child process run the project's TypeScript directly (Node 20 cannot):
// `.js` imports from a .ts file resolve to the .ts file next to it, and .ts files are transpiled
// (types stripped, nothing checked) with the project's own TypeScript. Output is cached in the temp
// folder by content hash, so repeated child processes skip loading the compiler.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const CACHE_DIR = path.join(os.tmpdir(), 'keel-test-ts-cache');
let typescript;

export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const candidate = new URL(specifier.slice(0, -'.js'.length) + '.ts', context.parentURL);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const source = await readFile(fileName, 'utf8');
  const key = createHash('sha256').update(fileName).update('\0').update(source).digest('hex');
  const cached = path.join(CACHE_DIR, `${key}.js`);
  try {
    return { format: 'module', source: await readFile(cached, 'utf8'), shortCircuit: true };
  } catch {
    // Not cached yet: transpile below.
  }
  typescript ??= (await import('typescript')).default;
  const { outputText } = typescript.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: typescript.ModuleKind.ESNext,
      target: typescript.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  });
  mkdirSync(CACHE_DIR, { recursive: true });
  // Write then rename, so a process killed mid-write never leaves a truncated cache entry.
  const partial = `${cached}.${process.pid}.tmp`;
  await writeFile(partial, outputText);
  await rename(partial, cached);
  return { format: 'module', source: outputText, shortCircuit: true };
}
