import { z } from 'zod';
import type { EventOf, ModelPin, Policy } from '../../common/events.js';

/*
 * An imported session is a record, not a grant. `keel import` writes an import mark into the session's
 * session_created.metadata (overwriting whatever the file said there), and the mark decides what of the
 * record is trusted in this home: approval_granted events up to `through` are inactive until granted again,
 * its policy is no looser than `ask` and its open approval requests ask again (built here from the calls),
 * a model pin from the file with a base URL needs a re-pin before any key is sent to it, and the project
 * folder is the one the import was given (`--project`), or none: such a session is read, not run.
 */

/** The key of the import mark in session_created.metadata. */
export const IMPORT_METADATA_KEY = 'imported';

const ImportMark = z.object({
  /** When this home imported the session. */
  at: z.string().min(1),
  /** The last seq of the imported events: everything at or below it came from the file. */
  through: z.number().int().nonnegative(),
  /** True when the import named the project folder (`--project`); the file's own folder is never used. */
  projectChosen: z.boolean(),
});
export type ImportMark = z.infer<typeof ImportMark>;

/**
 * The import mark of a session, or undefined for a session made here. A mark that does not parse counts
 * as an import of everything with no folder chosen: a broken mark must never widen trust.
 */
export function importMarkOf(created: Pick<EventOf<'session_created'>, 'metadata'>): ImportMark | undefined {
  const raw = created.metadata?.[IMPORT_METADATA_KEY];
  if (raw === undefined) return undefined;
  const parsed = ImportMark.safeParse(raw);
  return parsed.success
    ? parsed.data
    : { at: 'unknown', through: Number.MAX_SAFE_INTEGER, projectChosen: false };
}

/** True when the event at `seq` came from an imported file (so it grants nothing here). */
export function isImportedSeq(mark: ImportMark | undefined, seq: number): boolean {
  return mark !== undefined && seq <= mark.through;
}

/**
 * The policy an imported file's word sets here: a policy is a grant too, so nothing looser than `ask` (a
 * `full-auto` in the file would run commands no one here approved). `keel policy` sets one after the import.
 */
export function importedPolicy(policy: Policy): Policy {
  return policy === 'read-only' ? 'read-only' : 'ask';
}

/**
 * The hosts a session's commands may reach: its session_created allowlist, or none for an imported session (an
 * allowlist is a grant too: a file naming a host would open a way out for what its commands read).
 */
export function sessionNetworkAllow(
  created: Pick<EventOf<'session_created'>, 'metadata' | 'networkAllow'>,
): string[] {
  return importMarkOf(created) ? [] : (created.networkAllow ?? []);
}

/** What a turn of an imported session needs before it may run: the pin and the seq of the event that set it. */
export type ImportedTrustInput = {
  sessionId: string;
  mark: ImportMark | undefined;
  pin: ModelPin;
  pinSeq: number;
};

/**
 * Why the model of this session may not be called yet, or undefined: a pin that came from the imported
 * file with its own base URL is an endpoint no one here chose, and the key would go to it. One line, naming
 * the host and the command that confirms it.
 */
export function unconfirmedEndpoint(input: ImportedTrustInput): string | undefined {
  const { mark, pin } = input;
  if (!isImportedSeq(mark, input.pinSeq) || pin.baseUrl === undefined) return undefined;
  let host: string;
  try {
    host = new URL(pin.baseUrl).host || pin.baseUrl;
  } catch {
    host = pin.baseUrl;
  }
  return (
    `session ${input.sessionId} was imported pinned to ${pin.provider}:${pin.model} at ${host}, an endpoint ` +
    `no one here chose: no key is sent to it until you confirm it with ` +
    `keel model ${input.sessionId} ${pin.provider}:${pin.model} --base-url ${pin.baseUrl}`
  );
}

/** Why a turn of this session may not run, or undefined: its project folder, then its endpoint (see above). */
export function importedTrustProblem(input: ImportedTrustInput): string | undefined {
  if (input.mark && !input.mark.projectChosen) {
    return (
      `session ${input.sessionId} was imported without a project folder, and the folder its file names is ` +
      `not trusted: it can be read and exported, not run. Import the file again with ` +
      `keel import FILE --project DIR to work on DIR`
    );
  }
  return unconfirmedEndpoint(input);
}
