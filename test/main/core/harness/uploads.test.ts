import { describe, expect, it } from 'vitest';
import {
  planUploads,
  UPLOAD_MAX_BYTES,
  uploadName,
  uploadsNote,
} from '../../../../main/core/harness/uploads.js';

// Issue #32: names of files staged at /session/uploads — one component, nothing hidden, bounded.

describe('upload names', () => {
  it('keeps one safe path component', () => {
    expect(uploadName('../../etc/passwd')).toBe('passwd');
    expect(uploadName('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(uploadName('..')).toBe('file');
    expect(uploadName('.env')).toBe('env');
    expect(uploadName('a\u0000b\nc$(x).txt')).toBe('a_b_c__x_.txt');
    expect(uploadName('données été.csv')).toBe('données été.csv');
    const long = uploadName(`${'x'.repeat(300)}.tar.gz`);
    expect(long).toHaveLength(100);
    expect(long.endsWith('.gz')).toBe(true);
  });

  it('makes a prompt’s names distinct and refuses too many or too large files before any write', () => {
    expect(
      planUploads([
        { name: 'a.csv', size: 1 },
        { name: 'x/A.csv', size: 1 },
        { name: 'a', size: 1 },
      ]),
    ).toEqual(['a.csv', 'A-2.csv', 'a']);
    expect(() => planUploads([{ name: 'big.bin', size: UPLOAD_MAX_BYTES + 1 }])).toThrow(
      /files are staged up to/,
    );
    expect(() => planUploads(Array.from({ length: 21 }, () => ({ name: 'a', size: 1 })))).toThrow(
      /at most 20 files/,
    );
    expect(uploadsNote([])).toBe('');
    expect(uploadsNote([{ path: '/session/uploads/a.csv', size: 3 }])).toMatch(
      /\n- \/session\/uploads\/a\.csv \(3 bytes\)$/,
    );
  });
});
