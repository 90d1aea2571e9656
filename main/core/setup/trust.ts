import fs from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import type { SetupTrustEntry, SetupTrustReport } from '../../common/setup.js';
import {
  appendSetupApproval,
  approvedSetup,
  keepApprovedBytes,
  readApprovedBytes,
  readSetupApprovals,
} from '../../store/setupApprovals.js';
import { projectSetupParts } from './load.js';
import { LOCATIONS } from './discover.js';
import { SetupTrustError } from './errors.js';

export { SetupTrustError };

/*
 * Approving what a project folder brings, as `.mcp.json` is approved: by the exact bytes of each file (sha256),
 * kept in Keel's home (never in the project, so nothing a model or a clone writes there approves anything).
 * The approved bytes are kept too, so a later change is shown as a diff against what the person saw.
 */

/** A diff longer than this is cut (the person is told to read the file). */
const MAX_DIFF_CHARS = 64 * 1024;

/** What the project brings now, each file against the newest approval (with a diff when it changed). */
export function projectSetupTrust(home: string, folder: string): SetupTrustReport {
  const project = realFolder(folder);
  const { parts, problems } = projectSetupParts(project);
  const approval = approvedSetup(readSetupApprovals(home), project);
  const approved = approval?.hashes ?? new Map<string, string>();
  const entries: SetupTrustEntry[] = parts.map((part) => {
    const before = approved.get(part.relativePath);
    const state = before === part.hash ? 'approved' : before === undefined ? 'new' : 'changed';
    const entry: SetupTrustEntry = {
      path: part.relativePath,
      layout: part.layout,
      kind: part.kind,
      state,
      hash: part.hash,
      size: part.bytes.length,
    };
    if (state === 'approved') return entry;
    const old = before === undefined ? Buffer.alloc(0) : readApprovedBytes(home, before);
    const diff =
      old === undefined ? undefined : textDiff(part.relativePath, old, part.bytes, before === undefined);
    return diff === undefined ? entry : { ...entry, diff };
  });
  const present = new Set(parts.map((part) => part.relativePath));
  for (const [path, hash] of approved) {
    if (present.has(path)) continue;
    const kept = readApprovedBytes(home, hash);
    const diff = kept === undefined ? undefined : textDiff(path, kept, Buffer.alloc(0), false);
    const where = locationOf(path);
    entries.push({
      path,
      ...where,
      state: 'removed',
      hash,
      size: kept?.length ?? 0,
      ...(diff ? { diff } : {}),
    });
  }
  const pending = entries.some((entry) => entry.state === 'new' || entry.state === 'changed');
  return {
    project,
    status: parts.length === 0 ? 'none' : pending ? 'untrusted' : 'trusted',
    entries,
    problems,
    ...(approval ? { approvedAt: approval.event.at, approvedVia: approval.event.via } : {}),
  };
}

/**
 * Approves every file the project brings as it is now (their bytes kept in the home first): they take effect
 * from the next turn; a later change to any of them asks again. Throws when the folder brings nothing.
 * `expect` (the hashes the person was shown, by path) refuses an approval when the files changed meanwhile.
 */
export function approveProjectSetup(
  home: string,
  folder: string,
  via: string,
  expect?: Readonly<Record<string, string>>,
): SetupTrustReport {
  const project = realFolder(folder);
  const { parts } = projectSetupParts(project);
  if (parts.length === 0) {
    throw new SetupTrustError(
      `${project} brings no setup files (.claude/, .agents/, .keel/, .codex/hooks.json)`,
    );
  }
  if (expect !== undefined) {
    const same =
      Object.keys(expect).length === parts.length &&
      parts.every((part) => expect[part.relativePath] === part.hash);
    if (!same) {
      throw new SetupTrustError(
        'the project files changed since they were shown: look at them again, then approve',
      );
    }
  }
  for (const part of parts) keepApprovedBytes(home, part.bytes);
  appendSetupApproval(home, {
    kind: 'setup_approved',
    project,
    files: parts.map((part) => ({ path: part.relativePath, hash: part.hash, size: part.bytes.length })),
    via,
  });
  return projectSetupTrust(home, project);
}

/** Withdraws the project's approval: none of its files has an effect from the next turn. */
export function revokeProjectSetup(home: string, folder: string, via: string): SetupTrustReport {
  const project = realFolder(folder);
  appendSetupApproval(home, { kind: 'setup_revoked', project, files: [], via });
  return projectSetupTrust(home, project);
}

function textDiff(path: string, before: Buffer, after: Buffer, isNew: boolean): string | undefined {
  if (before.includes(0) || after.includes(0)) return undefined;
  const patch = createTwoFilesPatch(
    isNew ? '/dev/null' : `a/${path}`,
    after.length === 0 && !isNew ? '/dev/null' : `b/${path}`,
    before.toString('utf8'),
    after.toString('utf8'),
    undefined,
    undefined,
    { context: 3 },
  );
  const body = patch.split('\n').slice(1).join('\n'); // drop the "Index:"/separator line diff adds
  return body.length > MAX_DIFF_CHARS
    ? `${body.slice(0, MAX_DIFF_CHARS)}\n… (diff cut; read the file)`
    : body;
}

/** The layout and kind a removed file had, from where it was. */
function locationOf(relativePath: string): Pick<SetupTrustEntry, 'layout' | 'kind'> {
  for (const location of LOCATIONS) {
    if (!relativePath.startsWith(`${location.dir}/`)) continue;
    const rest = relativePath.slice(location.dir.length + 1);
    if (location.shape === 'file' && rest !== location.name) continue;
    if (location.shape === 'skills' && !rest.endsWith('/SKILL.md'))
      return { layout: location.layout, kind: 'resource' };
    return { layout: location.layout, kind: location.kind };
  }
  return { layout: 'keel', kind: 'resource' };
}

function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    throw new SetupTrustError(`${folder} is not a folder that exists`);
  }
}
