/*
 * Issue #32: the terminal is told when a turn stops to wait on an approval, so a person who switched away
 * comes back. OSC 9 (a desktop notification with a message) where the terminal is known to take it, BEL (the
 * bell: a beep, a badge or a flashing tab) everywhere else. Only on a terminal, never into a pipe or a file,
 * unless KEEL_BELL says otherwise.
 */

/** Terminals that show OSC 9 as a notification (others may print its text or ignore it). */
function takesOsc9(env: NodeJS.ProcessEnv): boolean {
  // Inside tmux or screen the sequence would have to be wrapped for the outer terminal: the bell passes as is.
  if (env['TMUX'] !== undefined || env['STY'] !== undefined) return false;
  const program = env['TERM_PROGRAM'] ?? '';
  return (
    ['iTerm.app', 'WezTerm', 'ghostty'].includes(program) ||
    env['WT_SESSION'] !== undefined ||
    env['ConEmuANSI'] === 'ON' ||
    env['TERM'] === 'xterm-kitty'
  );
}

/**
 * The bytes that ask for attention, or '' for none. `KEEL_BELL=off` never rings; `always` rings even when
 * standard error is not a terminal (tests, a wrapper that forwards it); anything else rings on a terminal.
 */
export function attentionSequence(env: NodeJS.ProcessEnv, isTTY: boolean, message: string): string {
  const setting = env['KEEL_BELL'];
  if (setting === 'off' || (!isTTY && setting !== 'always')) return '';
  // A control character in the message would end or change the sequence.
  const text = Array.from(message, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 || (code >= 0x7f && code <= 0x9f) ? ' ' : c;
  })
    .join('')
    .slice(0, 200);
  return takesOsc9(env) ? `\u001b]9;${text}\u0007` : '\u0007';
}
