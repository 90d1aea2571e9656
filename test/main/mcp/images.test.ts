import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sniffImageType } from '../../../main/common/images.js';
import { outcomeFromResult } from '../../../main/mcp/results.js';
import type { ToolContext } from '../../../main/tools/types.js';

// An MCP result's image content: kept as an artifact, listed as an image only when its bytes are one.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function context(): ToolContext {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-mcp-images-'));
  dirs.push(dir);
  return {
    artifactsDir: path.join(dir, 'artifacts'),
    idempotencyKey: 'ev7-mcp__shots__take',
    redactor: { redact: (text: string) => text },
  } as unknown as ToolContext;
}

describe('MCP image results', () => {
  it('keeps a PNG as an artifact and lists it with the type its bytes are', () => {
    const ctx = context();
    const outcome = outcomeFromResult(
      {
        content: [
          { type: 'text', text: 'shot' },
          // A server that calls its PNG a JPEG: shown as what it is.
          { type: 'image', mimeType: 'image/jpeg', data: PNG.toString('base64') },
        ],
      },
      ctx,
    );
    expect(outcome.images).toEqual([
      { handle: 'ev7-mcp__shots__take-2.jpg', mimeType: 'image/png', bytes: PNG.length },
    ]);
    expect(fs.readFileSync(path.join(ctx.artifactsDir, 'ev7-mcp__shots__take-2.jpg'))).toEqual(PNG);
    expect(outcome.content).toContain('artifact ev7-mcp__shots__take-2.jpg');
  });

  it('lists no image for SVG or bytes that are no image, but still keeps them as artifacts', () => {
    const ctx = context();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const outcome = outcomeFromResult(
      {
        content: [
          { type: 'image', mimeType: 'image/svg+xml', data: svg.toString('base64') },
          { type: 'image', mimeType: 'image/png', data: Buffer.from('not a png').toString('base64') },
        ],
      },
      ctx,
    );
    expect(outcome.images).toBeUndefined();
    expect(fs.readdirSync(ctx.artifactsDir).sort()).toEqual([
      'ev7-mcp__shots__take-1.svg',
      'ev7-mcp__shots__take-2.png',
    ]);
  });

  it('sniffs PNG, JPEG, GIF and WebP from their first bytes, and nothing else', () => {
    expect(sniffImageType(PNG)).toBe('image/png');
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a'))).toBe('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).toBeUndefined();
    expect(sniffImageType(Buffer.from('<svg'))).toBeUndefined();
    expect(sniffImageType(Buffer.alloc(0))).toBeUndefined();
  });
});
