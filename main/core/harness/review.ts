import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { applyPatch, createTwoFilesPatch, parsePatch, reversePatch, type StructuredPatch } from 'diff';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { existingCheckouts, uncommittedDirs } from '../persistent/turnCheckouts.js';
import { readPersistentConfig } from '../persistent/config.js';
import type { FileVersions } from '../../common/harnessViews.js';
import { HarnessError } from './errors.js';

/** Files larger than this are listed but not diffed. */
const MAX_DIFF_FILE_BYTES = 1024 * 1024;
/** Largest text given per side to a diff editor. */
const MAX_VERSION_BYTES = 4 * 1024 * 1024;
/** A commit patch larger than this is not read to rebuild a file's texts. */
const MAX_PATCH_BYTES = 64 * 1024 * 1024;
const PROMPT_CHARS = 200;

/** What a new turn does to a dir's uncommitted changes. */
export type NewTurnEffect = 'commit' | 'refuse' | 'discard';

/** One dir's uncommitted changes for review. */
export type PersistentDirReview = {
  dir: string;
  commit: 'auto' | 'manual';
  readOnly: boolean;
  onNewTurn: NewTurnEffect;
  files: { path: string; change: 'added' | 'modified' | 'deleted' }[];
  diff: string;
};

type Text = { kind: 'text'; text: string } | { kind: 'absent' } | { kind: 'binary' } | { kind: 'large' };

function readVersion(file: string, maxBytes: number): Text {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return { kind: 'absent' };
  }
  if (stat.isSymbolicLink()) return { kind: 'text', text: fs.readlinkSync(file) };
  if (!stat.isFile()) return { kind: 'absent' };
  if (stat.size > maxBytes) return { kind: 'large' };
  const buffer = fs.readFileSync(file);
  return buffer.subarray(0, 8192).includes(0)
    ? { kind: 'binary' }
    : { kind: 'text', text: buffer.toString('utf8') };
}

function diffText(version: Text): string | undefined {
  if (version.kind === 'absent') return '';
  return version.kind === 'text' ? version.text : undefined;
}

/** What a new turn does to uncommitted changes of a dir (see TurnManager.start and prepareTurn). */
function effectOf(commit: 'auto' | 'manual', readOnly: boolean): NewTurnEffect {
  if (readOnly) return 'discard';
  return commit === 'auto' ? 'commit' : 'refuse';
}

/**
 * The uncommitted changes of a session's Persistent Dir checkouts, each file diffed against the project
 * folder's current version (what applying would change; binary and large files are named, not diffed), with
 * what a new turn would do to them. Reads only: no lease needed. Undefined for a session without checkouts.
 */
export async function reviewPersistentDirs(
  dataDir: string,
  onlyDir?: string,
): Promise<PersistentDirReview[] | undefined> {
  const config = readPersistentConfig(dataDir);
  if (!config) return undefined;
  const checkouts = new Map(
    existingCheckouts(dataDir, config).map((checkout) => [checkout.spec.name, checkout]),
  );
  const reviews: PersistentDirReview[] = [];
  for (const dir of await uncommittedDirs(dataDir)) {
    if (onlyDir !== undefined && dir.dir !== onlyDir) continue;
    const checkout = checkouts.get(dir.dir);
    const parts: string[] = [];
    for (const file of dir.files) {
      const ours =
        file.status === 'deleted'
          ? ''
          : diffText(
              readVersion(path.join(checkout?.location.checkout ?? '', file.path), MAX_DIFF_FILE_BYTES),
            );
      const theirs =
        file.status === 'added'
          ? ''
          : diffText(readVersion(path.join(checkout?.backing ?? '', file.path), MAX_DIFF_FILE_BYTES));
      if (ours === undefined || theirs === undefined) {
        parts.push(`Binary or large file ${file.path} ${file.status}\n`);
        continue;
      }
      parts.push(
        createTwoFilesPatch(
          file.status === 'added' ? '/dev/null' : `a/${file.path}`,
          file.status === 'deleted' ? '/dev/null' : `b/${file.path}`,
          theirs,
          ours,
          undefined,
          undefined,
          { context: 3 },
        ),
      );
    }
    reviews.push({
      dir: dir.dir,
      commit: dir.commit,
      readOnly: dir.readOnly,
      onNewTurn: effectOf(dir.commit, dir.readOnly),
      files: dir.files.map((file) => ({ path: file.path, change: file.status })),
      diff: parts.join(''),
    });
  }
  return reviews;
}

/** The sentence to warn with before a new turn, or null when a new turn leaves the reviewed changes alone. */
export function newTurnWarning(reviews: readonly PersistentDirReview[]): string | null {
  const describe = (review: PersistentDirReview) =>
    `${review.dir} (${review.files.length} file${review.files.length === 1 ? '' : 's'})`;
  const refused = reviews.filter((review) => review.onNewTurn === 'refuse');
  const discarded = reviews.filter((review) => review.onNewTurn === 'discard');
  const sentences: string[] = [];
  if (refused.length > 0) {
    sentences.push(
      `Uncommitted changes in ${refused.map(describe).join(', ')} would be lost: a new turn starts from the project folder. Apply or discard them first, or send with discardChanges to discard them.`,
    );
  }
  if (discarded.length > 0) {
    sentences.push(
      `A new turn discards the changes in ${discarded.map(describe).join(', ')} (read-only for this session).`,
    );
  }
  return sentences.length > 0 ? sentences.join(' ') : null;
}

function changeOf(preHash: string | null, postHash: string | null): 'added' | 'modified' | 'deleted' {
  if (preHash === null) return 'added';
  return postHash === null ? 'deleted' : 'modified';
}

/**
 * Both texts of one changed file for a diff editor. Without `commitSeq`: the uncommitted change (the project
 * folder's file vs the checkout's). With it: the file before and after that persistent_commit, rebuilt from
 * the folder's current file and the commit's patch and checked against the recorded hashes; when the file
 * changed since (or is binary), `note` says so and `patch` carries the file's part of the commit's patch.
 */
export async function readFileVersions(
  dataDir: string,
  artifactsDir: string,
  events: readonly SessionEvent[],
  request: { dir: string; path: string; commitSeq?: number | undefined },
): Promise<FileVersions> {
  const config = readPersistentConfig(dataDir);
  if (!config) {
    throw new HarnessError(
      'invalid_state',
      'this session works on its project folder directly: it has no checkouts',
    );
  }
  const spec = config.dirs.find((dir) => dir.name === request.dir);
  if (!spec) {
    throw new HarnessError(
      'not_found',
      `no Persistent Dir "${request.dir}" in this session (it has: ${config.dirs.map((d) => d.name).join(', ')})`,
    );
  }
  const checkout = existingCheckouts(dataDir, config).find((candidate) => candidate.spec.name === spec.name);
  const backing = checkout?.backing ?? spec.path;
  if (request.commitSeq === undefined) {
    const changed = (await uncommittedDirs(dataDir))
      .find((dir) => dir.dir === spec.name)
      ?.files.find((file) => file.path === request.path);
    if (!changed || !checkout) {
      throw new HarnessError('not_found', `${request.path} has no uncommitted change in ${spec.name}`);
    }
    const original = readVersion(path.join(backing, request.path), MAX_VERSION_BYTES);
    const modified = readVersion(path.join(checkout.location.checkout, request.path), MAX_VERSION_BYTES);
    return versions(spec.name, request.path, changed.status, original, modified);
  }
  const commit = events.find(
    (event): event is EventOf<'persistent_commit'> =>
      event.seq === request.commitSeq && event.kind === 'persistent_commit',
  );
  if (!commit || commit.dir !== spec.name) {
    throw new HarnessError('not_found', `event ${request.commitSeq} is not a commit of ${spec.name}`);
  }
  const file = commit.files.find((candidate) => candidate.path === request.path);
  if (!file) throw new HarnessError('not_found', `commit ${commit.seq} did not change ${request.path}`);
  const change = changeOf(file.preHash, file.postHash);
  const base = { dir: spec.name, path: file.path, change, binary: false, tooLarge: false };
  const patch = commit.diffArtifact
    ? readFilePatch(path.join(artifactsDir, commit.diffArtifact), file.path)
    : undefined;
  const fallback = (note: string): FileVersions => ({
    ...base,
    original: null,
    modified: null,
    note,
    ...(patch ? { patch: patch.text } : {}),
  });
  const current = path.join(backing, file.path);
  if ((await hashOf(current)) !== file.postHash) {
    return fallback(
      `${file.path} changed in the project folder since this commit; its patch is shown instead`,
    );
  }
  const after = readVersion(current, MAX_VERSION_BYTES);
  if (after.kind === 'binary') return { ...fallback(`${file.path} is a binary file`), binary: true };
  if (after.kind === 'large') return { ...fallback(`${file.path} is larger than 4 MB`), tooLarge: true };
  const modified = after.kind === 'text' ? after.text : null;
  if (!patch?.structured) return fallback(`the commit's patch for ${file.path} could not be read`);
  const rebuilt = applyPatch(modified ?? '', reversePatch(patch.structured));
  const original = file.preHash === null ? null : rebuilt === false ? undefined : rebuilt;
  if (original === undefined || (original !== null && sha256(original) !== file.preHash)) {
    return fallback(`the version of ${file.path} before this commit could not be rebuilt`);
  }
  return { ...base, original, modified };
}

function versions(
  dir: string,
  file: string,
  change: 'added' | 'modified' | 'deleted',
  original: Text,
  modified: Text,
): FileVersions {
  const binary = original.kind === 'binary' || modified.kind === 'binary';
  const tooLarge = original.kind === 'large' || modified.kind === 'large';
  const text = (version: Text) => (!binary && !tooLarge && version.kind === 'text' ? version.text : null);
  return {
    dir,
    path: file,
    change,
    original: text(original),
    modified: text(modified),
    binary,
    tooLarge,
    ...(binary
      ? { note: `${file} is a binary file` }
      : tooLarge
        ? { note: `${file} is larger than 4 MB` }
        : {}),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** sha256 of a file as the checkout records it (a link: of its target text); null when absent. */
async function hashOf(file: string): Promise<string | null> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return null;
  }
  if (stat.isSymbolicLink()) return sha256(fs.readlinkSync(file));
  if (!stat.isFile()) return null;
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** One file's part of a commit's `git diff-tree -p` patch: its text and, when it has text hunks, parsed. */
function readFilePatch(
  artifact: string,
  file: string,
): { text: string; structured?: StructuredPatch } | undefined {
  let text: string;
  try {
    if (fs.statSync(artifact).size > MAX_PATCH_BYTES) return undefined;
    text = fs.readFileSync(artifact, 'utf8');
  } catch {
    return undefined;
  }
  const sections = text.split(/^(?=diff --git )/m);
  const section = sections.find((part) => {
    const header = part.slice(0, part.indexOf('\n'));
    return header === `diff --git a/${file} b/${file}`;
  });
  if (section === undefined) return undefined;
  if (/^GIT binary patch$/m.test(section)) return { text: section };
  const [structured] = parsePatch(section);
  return structured ? { text: section, structured } : { text: section };
}

/** What each turn changed and committed: the session's persistent_commit events, grouped by turn. */
export function commitHistory(events: readonly SessionEvent[]): {
  turn: number;
  prompt?: string;
  commits: {
    seq: number;
    at: string;
    dir: string;
    files: { path: string; change: 'added' | 'modified' | 'deleted' }[];
    diffArtifact?: string;
  }[];
}[] {
  type Turn = ReturnType<typeof commitHistory>[number];
  const turns: Turn[] = [];
  let turn = 0;
  let prompt: string | undefined;
  for (const event of events) {
    if (event.kind === 'user_message') {
      turn += 1;
      prompt = event.content.slice(0, PROMPT_CHARS);
      continue;
    }
    if (event.kind !== 'persistent_commit') continue;
    let entry = turns[turns.length - 1];
    if (entry?.turn !== turn) {
      entry = { turn, ...(prompt !== undefined ? { prompt } : {}), commits: [] };
      turns.push(entry);
    }
    entry.commits.push({
      seq: event.seq,
      at: event.at,
      dir: event.dir,
      files: event.files.map((file) => ({ path: file.path, change: changeOf(file.preHash, file.postHash) })),
      ...(event.diffArtifact ? { diffArtifact: event.diffArtifact } : {}),
    });
  }
  return turns;
}
