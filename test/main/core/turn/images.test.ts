import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Payload, PayloadMessage } from '../../../../main/common/payload.js';
import { MAX_REQUEST_IMAGES, attachPayloadImages } from '../../../../main/core/turn/images.js';

// Real image files in a real artifacts folder: only the newest MAX_REQUEST_IMAGES get their bytes, walked from
// the end of the payload (a long session's messages are not copied per request).

let artifacts: string;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

beforeEach(() => {
  artifacts = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-images-'));
});

afterEach(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
});

describe('attachPayloadImages', () => {
  it('attaches the newest images only, across messages and within one, in place', () => {
    const messages: PayloadMessage[] = [{ role: 'user', content: 'go' }];
    for (let m = 0; m < 12; m++) {
      const images = [0, 1].map((i) => {
        const handle = `img-${m}-${i}.png`;
        fs.writeFileSync(path.join(artifacts, handle), PNG);
        return { handle, mimeType: 'image/png' as const };
      });
      messages.push({ role: 'tool', content: `result ${m}`, toolCallId: `c${m}`, images });
      messages.push({ role: 'assistant', content: 'next' });
    }
    const payload: Payload = { messages };
    expect(attachPayloadImages(payload, artifacts)).toBe(MAX_REQUEST_IMAGES);
    const all = messages.flatMap((message) => message.images ?? []);
    expect(all).toHaveLength(24);
    const withData = all.filter((image) => image.data !== undefined).map((image) => image.handle);
    expect(withData).toEqual(all.slice(-MAX_REQUEST_IMAGES).map((image) => image.handle));
    expect(all[23]?.data).toBe(PNG.toString('base64'));
  });

  it('leaves an image without bytes when its file is missing or is not what its type says', () => {
    fs.writeFileSync(path.join(artifacts, 'fake.png'), 'not a png');
    const payload: Payload = {
      messages: [
        {
          role: 'tool',
          content: 'r',
          toolCallId: 'c',
          images: [
            { handle: 'fake.png', mimeType: 'image/png' },
            { handle: 'gone.png', mimeType: 'image/png' },
          ],
        },
      ],
    };
    expect(attachPayloadImages(payload, artifacts)).toBe(0);
    expect(payload.messages[0]?.images?.every((image) => image.data === undefined)).toBe(true);
  });
});
