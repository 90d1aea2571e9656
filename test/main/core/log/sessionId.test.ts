import { describe, expect, it } from 'vitest';
import { assertValidSessionId, isValidSessionId, newSessionId } from '../../../../main/core/log/sessionId.js';

describe('newSessionId', () => {
  it('makes 26 lowercase Crockford base32 characters', () => {
    expect(newSessionId()).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
  });

  it('sorts by creation time as text', () => {
    const times = [0, 1, 31, 32, 1_700_000_000_000, 1_700_000_000_001, 4_102_444_800_000];
    const ids = times.map((time) => newSessionId(time));
    expect([...ids].sort()).toEqual(ids);
    expect(newSessionId(0).slice(0, 10)).toBe('0000000000');
  });

  it('does not repeat within one millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newSessionId(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });

  it('makes ids that are valid session ids', () => {
    expect(isValidSessionId(newSessionId())).toBe(true);
  });
});

describe('isValidSessionId', () => {
  it('accepts plain folder names and refuses paths, dot names and Windows device names', () => {
    for (const id of ['chat_123', 'a', 'A.b-c_d', '01m8k5c5zcdxnf16f5r0xban6a'])
      expect(isValidSessionId(id)).toBe(true);
    for (const id of [
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a\\b',
      '.git',
      'x.',
      'con',
      'NUL.txt',
      'com1',
      'a b',
      'x'.repeat(129),
    ]) {
      expect(isValidSessionId(id)).toBe(false);
    }
    expect(() => assertValidSessionId('a/b')).toThrow(/cannot be a session id/);
  });
});
