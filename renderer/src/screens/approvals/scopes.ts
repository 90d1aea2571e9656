import type { ApprovalScope, ScopeKind } from '../../../../main/ipc/contract.js';

/** A decision the panel can send: a grant of one scope kind, or a denial. */
export type DecisionKind = ScopeKind | 'deny';

/** What the user typed into the path-glob or command-prefix box, checked; `error` is a sentence to show. */
export type ScopeInput = { ok: true; scope: ApprovalScope } | { ok: false; error: string };

/** The editable part of a suggested scope (`path:src/**` → `src/**`); empty when there is no suggestion. */
export function editablePart(suggested: string | undefined): string {
  if (!suggested) return '';
  const colon = suggested.indexOf(':');
  return colon === -1 ? suggested : suggested.slice(colon + 1);
}

/** The session's own absolute prefixes a path glob may start with, as the tools show those paths. */
const AREA_GLOB = /^\/(session|persistent\/[^/\\]+)\/./;

/**
 * The scope a path-glob or command-prefix grant would record for `text`, or why it cannot: empty text, an
 * absolute path other than the session's own `/session/...` or `/persistent/<name>/...`, or `..` (globs are
 * project-relative), a newline. A typed `path:` / `prefix:` is accepted.
 */
export function buildScope(kind: 'path' | 'prefix', text: string): ScopeInput {
  let value = text.trim();
  if (value.startsWith(`${kind}:`)) value = value.slice(kind.length + 1).trim();
  if (value === '') {
    return {
      ok: false,
      error: kind === 'path' ? 'Enter a path glob, like src/**.' : 'Enter a command prefix, like npm test.',
    };
  }
  if (/[\r\n]/.test(value)) return { ok: false, error: 'A scope is one line.' };
  if (kind === 'path') {
    if ((value.startsWith('/') && !AREA_GLOB.test(value)) || /^[a-zA-Z]:[\\/]/.test(value)) {
      return {
        ok: false,
        error:
          'Path globs are relative to the workspace (src/**, not /src/**), or start with /session/ or /persistent/<name>/.',
      };
    }
    if (value.split(/[\\/]/).includes('..')) {
      return { ok: false, error: 'A path glob cannot leave the workspace (no ..).' };
    }
    if (value === '**' || value === '**/*') {
      return { ok: false, error: 'That glob matches every file: use "Allow for this session" instead.' };
    }
  }
  return { ok: true, scope: `${kind}:${value}` };
}

/** One sentence saying which calls a grant would pre-authorise (as main matches them), shown before deciding. */
export function describeScope(tool: string, scope: ApprovalScope): string {
  if (scope === 'once') return `Only this ${tool} call.`;
  if (scope === 'session') return `Every ${tool} call in this session, until revoked.`;
  if (scope === 'tool') {
    return `Every ${tool} call in this session and in later sessions of this project: a rule kept until revoked (Settings, MCP servers).`;
  }
  if (scope.startsWith('domain:')) {
    return `Every ${tool} call to the host ${scope.slice('domain:'.length)} in this session, until revoked.`;
  }
  if (scope.startsWith('path:')) {
    return `Any tool call on a workspace path matching ${scope.slice(5)} (protected paths still ask), until revoked.`;
  }
  const prefix = scope.slice('prefix:'.length).trim();
  return (
    `Commands that are "${prefix}" or "${prefix}" followed by plain arguments (no ; & | $ ( ) < > or backslash), ` +
    'not options that run another command or write elsewhere (find -exec, sed -i, git -c, npm exec, sh -c), until revoked.'
  );
}

/** A key press as the shortcut handler sees it (a KeyboardEvent fits). */
export type KeyPress = {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
};

/**
 * The decision a key press asks for: Ctrl/Cmd+Enter allow once, Ctrl/Cmd+Shift+Enter allow for the session,
 * Ctrl/Cmd+Backspace deny; anything else (Alt held included) is not a shortcut.
 */
export function shortcutDecision(press: KeyPress): 'once' | 'session' | 'deny' | undefined {
  if (!(press.ctrlKey || press.metaKey) || press.altKey) return undefined;
  if (press.key === 'Enter') return press.shiftKey ? 'session' : 'once';
  if (press.key === 'Backspace' && !press.shiftKey) return 'deny';
  return undefined;
}

/** How the shortcuts are written on this platform (⌘ on macOS, Ctrl elsewhere). */
export function shortcutLabels(platform: string): Record<'once' | 'session' | 'deny', string> {
  const mod = /mac|darwin/i.test(platform) ? '⌘' : 'Ctrl';
  return { once: `${mod}+Enter`, session: `${mod}+Shift+Enter`, deny: `${mod}+Backspace` };
}

/** The aria-keyshortcuts value of each decision. */
export const ARIA_SHORTCUTS = {
  once: 'Control+Enter Meta+Enter',
  session: 'Control+Shift+Enter Meta+Shift+Enter',
  deny: 'Control+Backspace Meta+Backspace',
} as const;
