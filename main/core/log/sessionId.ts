import crypto from 'node:crypto';

/** Crockford base32, lowercase: no i, l, o, u, so ids survive being read aloud or retyped. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_BYTES = 10;

/**
 * Returns a new session id: 10 base32 characters of the time in ms, then 16 of randomness (80
 * bits), so ids sort by creation time as text and collide with negligible probability.
 */
export function newSessionId(now: number = Date.now()): string {
  let time = '';
  let rest = Math.max(0, Math.floor(now));
  for (let i = 0; i < TIME_CHARS; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  const bytes = crypto.randomBytes(RANDOM_BYTES);
  let random = '';
  // 10 bytes = 80 bits = 16 characters of 5 bits.
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      random += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return time + random;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Names Windows refuses for a folder, whatever the extension. */
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

/** True when `id` is usable as a session id: it names one folder under sessions/, on every OS. */
export function isValidSessionId(id: string): boolean {
  return SAFE_ID.test(id) && !id.endsWith('.') && !WINDOWS_RESERVED.test(id);
}

/** Throws an error a person can act on when `id` cannot be a session id. */
export function assertValidSessionId(id: string): void {
  if (!isValidSessionId(id)) {
    throw new Error(
      `"${id}" cannot be a session id: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
}
