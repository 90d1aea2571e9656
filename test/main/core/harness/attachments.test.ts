import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf, ProviderKind } from '../../../../main/common/events.js';
import { AttachmentError, checkAttachment } from '../../../../main/core/harness/attachments.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import {
  exportSession,
  importSession,
  InvalidExportError,
  parseExport,
} from '../../../../main/core/harness/transfer.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { eventsOf, harnessFor } from './support.js';

// Files attached to a prompt (issue #32): checked by their bytes, kept as artifacts, named in user_message,
// and sent to each provider in its own block, through the real harness and the scripted provider server
// (which rejects a malformed block the way the provider does).

const FIXTURES = path.resolve('test/fixtures/attachments');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name));

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-attach-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'README.md': 'readme\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('checking a file by its bytes', () => {
  it.each([
    ['red.png', 'image/png', 16, 8],
    ['photo.jpg', 'image/jpeg', 12, 10],
    ['dot.gif', 'image/gif', 1, 1],
    ['pic.webp', 'image/webp', 10, 6],
  ])('takes %s as %s of %i×%i', (name, mimeType, width, height) => {
    expect(checkAttachment({ name, data: fixture(name) })).toEqual({ mimeType, width, height });
  });

  it('takes a PDF', () => {
    expect(checkAttachment({ name: 'note.pdf', data: fixture('note.pdf') })).toEqual({
      mimeType: 'application/pdf',
    });
  });

  it('refuses SVG, bytes that are no image whatever the name says, and empty files', () => {
    expect(() => checkAttachment({ name: 'evil.svg', data: fixture('evil.svg') })).toThrow(
      /"evil.svg" is an SVG image: SVG is not accepted/,
    );
    expect(() => checkAttachment({ name: 'shot.png', data: Buffer.from('#!/bin/sh\nrm -rf /\n') })).toThrow(
      /"shot.png" is not a PNG, JPEG, GIF, WebP image or a PDF \(judged by its bytes/,
    );
    expect(() => checkAttachment({ name: 'x.png', data: Buffer.alloc(0) })).toThrow(AttachmentError);
  });

  it('refuses an image over the size limit and one whose header claims too many pixels', () => {
    const big = Buffer.concat([fixture('red.png'), Buffer.alloc(6 * 1024 * 1024)]);
    expect(() => checkAttachment({ name: 'big.png', data: big })).toThrow(
      /is 6\.0 MB; an image may be at most 5\.0 MB/,
    );
    // IHDR width and height (bytes 16..23) rewritten: 9000×9000 claimed by a 128-byte file.
    const bomb = Buffer.from(fixture('red.png'));
    bomb.writeUInt32BE(9000, 16);
    bomb.writeUInt32BE(9000, 20);
    expect(() => checkAttachment({ name: 'bomb.png', data: bomb })).toThrow(/is 9000×9000 pixels/);
  });
});

/** A harness pinned to `provider`/`model` on the scripted server. */
function harnessOn(provider: ProviderKind, model: string) {
  const baseUrl = provider === 'anthropic' ? server.anthropicBaseUrl : server.openaiBaseUrl;
  return harnessFor(
    home,
    server,
    { project: { path: project } },
    {
      model: { provider, model, baseUrl, contextWindow: 200_000 },
      keys: { anthropic: 'sk-ant-test', openai: 'sk-test' },
    },
  );
}

async function sendWith(
  provider: ProviderKind,
  model: string,
  files: string[],
  prompt = 'what is wrong here?',
) {
  const harness = harnessOn(provider, model);
  const result = await generateHarness({
    harness,
    session: 's1',
    messages: [
      { role: 'user', content: prompt, attachments: files.map((name) => ({ name, data: fixture(name) })) },
    ],
  });
  const request = server.requests.at(-1);
  expect(request?.rejected).toBeUndefined();
  return { result, body: request?.body as Record<string, unknown>, harness };
}

const b64 = (name: string) => fixture(name).toString('base64');

describe('a prompt with files, sent to each provider', () => {
  it('keeps each file as an artifact named by handle in user_message', async () => {
    await sendWith('anthropic', 'claude-sonnet-4-5', ['red.png', 'note.pdf']);
    const message = eventsOf(home, 's1').find((e): e is EventOf<'user_message'> => e.kind === 'user_message');
    expect(message?.attachments).toEqual([
      {
        handle: expect.stringMatching(/^attachments\/[0-9a-f]{64}\.png$/) as unknown,
        mimeType: 'image/png',
        bytes: fixture('red.png').length,
        name: 'red.png',
        width: 16,
        height: 8,
      },
      {
        handle: expect.stringMatching(/^attachments\/[0-9a-f]{64}\.pdf$/) as unknown,
        mimeType: 'application/pdf',
        bytes: fixture('note.pdf').length,
        name: 'note.pdf',
      },
    ]);
    const kept = path.join(home, 'sessions', 's1', 'artifacts', message?.attachments?.[0]?.handle ?? '');
    expect(fs.readFileSync(kept)).toEqual(fixture('red.png'));
  });

  it('sends Anthropic image and document blocks with a base64 source, before the text', async () => {
    const { body } = await sendWith('anthropic', 'claude-sonnet-4-5', ['red.png', 'note.pdf']);
    const messages = body.messages as { role: string; content: unknown[] }[];
    // The environment block follows in the same user turn; the text carries the cache breakpoint.
    expect(messages[0]?.content.slice(0, 3)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64('red.png') } },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: b64('note.pdf') },
        title: 'note.pdf',
      },
      { type: 'text', text: 'what is wrong here?', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('sends the Responses API input_image and input_file parts, then input_text', async () => {
    const { body } = await sendWith('openai', 'gpt-5', ['photo.jpg', 'note.pdf']);
    const input = body.input as { role?: string; content?: unknown }[];
    expect(input.find((item) => item.role === 'user')?.content).toEqual([
      { type: 'input_image', image_url: `data:image/jpeg;base64,${b64('photo.jpg')}`, detail: 'auto' },
      {
        type: 'input_file',
        filename: 'note.pdf',
        file_data: `data:application/pdf;base64,${b64('note.pdf')}`,
      },
      { type: 'input_text', text: 'what is wrong here?' },
    ]);
  });

  it('sends a chat-completions vision model image_url parts; a PDF there is a note', async () => {
    const { body } = await sendWith('openai-compatible', 'llava:13b', ['pic.webp', 'note.pdf']);
    const messages = body.messages as { role: string; content: unknown }[];
    const user = messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'image_url', image_url: { url: `data:image/webp;base64,${b64('pic.webp')}` } },
      {
        type: 'text',
        text: expect.stringMatching(
          /^what is wrong here\?\n\[attached PDF attachments\/[0-9a-f]{64}\.pdf \(application\/pdf, note\.pdf\) is not shown to this model\]$/,
        ) as unknown,
      },
    ]);
  });

  it('gives a model without vision a text note naming the image instead of the image', async () => {
    const { body } = await sendWith('openai-compatible', 'scripted-model', ['dot.gif']);
    const messages = body.messages as { role: string; content: unknown }[];
    const user = messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(
          /^what is wrong here\?\n\[attached image attachments\/[0-9a-f]{64}\.gif \(image\/gif, dot\.gif\) is not shown to this model\]$/,
        ) as unknown,
      },
    ]);
    expect(JSON.stringify(body)).not.toContain(b64('dot.gif'));
  });

  it('refuses a prompt whose file lies about its type before anything is recorded', async () => {
    const harness = harnessOn('anthropic', 'claude-sonnet-4-5');
    await expect(
      generateHarness({
        harness,
        session: 's2',
        messages: [
          { role: 'user', content: 'look', attachments: [{ name: 'a.png', data: fixture('evil.svg') }] },
        ],
      }),
    ).rejects.toThrow(/SVG is not accepted/);
    expect(eventsOf(home, 's2').some((e) => e.kind === 'user_message')).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('re-sends the image on the next turn (resume reads it from the artifacts)', async () => {
    const { harness } = await sendWith('anthropic', 'claude-sonnet-4-5', ['red.png']);
    await generateHarness({ harness, session: 's1', messages: [{ role: 'user', content: 'and now?' }] });
    const messages = server.requests.at(-1)?.body as { messages: { role: string; content: unknown[] }[] };
    expect(JSON.stringify(messages.messages[0]?.content)).toContain(b64('red.png'));
  });
});

describe('the scripted server rejects what the providers reject', () => {
  it('an Anthropic image whose media type is not its bytes', async () => {
    const response = await fetch(`${server.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64('photo.jpg') } },
            ],
          },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Image does not match the provided media type image/png');
  });

  it('a chat-completions part of the Responses shape, and a Responses part of the chat shape', async () => {
    const chat = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: 'data:image/png;base64,' + b64('red.png') }],
          },
        ],
      }),
    });
    expect(chat.status).toBe(400);
    expect(await chat.text()).toContain("Invalid value: 'input_image'");
    const responses = await fetch(`${server.openaiBaseUrl}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        input: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }],
      }),
    });
    expect(responses.status).toBe(400);
    expect(await responses.text()).toContain("Invalid value: 'image_url'");
  });
});

describe('export and import carry the files', () => {
  function exportText(id: string): string {
    let text = '';
    exportSession(home, id, (chunk) => (text += chunk));
    return text;
  }

  it('ends the export with the bytes; an import keeps them as artifacts and exports the same lines', async () => {
    await sendWith('anthropic', 'claude-sonnet-4-5', ['red.png']);
    const text = exportText('s1');
    const last = JSON.parse(text.trim().split('\n').at(-1) ?? '{}') as {
      attachment?: { handle: string; data: string };
    };
    expect(last.attachment?.data).toBe(b64('red.png'));
    const other = path.join(dir, 'other-home');
    const { id } = importSession(other, text, { project });
    expect(
      fs.readFileSync(path.join(other, 'sessions', id, 'artifacts', last.attachment?.handle ?? '')),
    ).toEqual(fixture('red.png'));
    // Exporting the import again gives the same file (the bytes too).
    let again = '';
    exportSession(other, id, (chunk) => (again += chunk));
    expect(again.split('\n').filter((l) => l.startsWith('{"attachment"'))).toEqual(
      text.split('\n').filter((l) => l.startsWith('{"attachment"')),
    );
  });

  it('re-checks imported bytes: an SVG, bytes of another type, another hash, a file no message names', async () => {
    await sendWith('anthropic', 'claude-sonnet-4-5', ['red.png']);
    const text = exportText('s1');
    const lines = text.trim().split('\n');
    const line = JSON.parse(lines.at(-1) ?? '{}') as { attachment: { handle: string; data: string } };
    const { handle } = line.attachment;
    const withLast = (attachment: unknown) =>
      [...lines.slice(0, -1), JSON.stringify({ attachment })].join('\n');
    const other = path.join(dir, 'other-home');
    const svg = fixture('evil.svg').toString('base64');
    expect(() => importSession(other, withLast({ handle, data: svg }), { project })).toThrow(
      InvalidExportError,
    );
    expect(parseExport(withLast({ handle, data: svg }))).toMatchObject({
      ok: false,
      problems: [{ message: expect.stringMatching(/its bytes do not hash to its name/) as unknown }],
    });
    // A real JPEG renamed to the PNG's handle (hash made to match): its bytes are not the recorded type.
    const jpeg = fixture('photo.jpg');
    const jpegHandle = `attachments/${crypto.createHash('sha256').update(jpeg).digest('hex')}.png`;
    const renamed = lines.slice(0, -1).join('\n').replaceAll(handle, jpegHandle);
    const lying = `${renamed}\n${JSON.stringify({ attachment: { handle: jpegHandle, data: jpeg.toString('base64') } })}`;
    expect(parseExport(lying)).toMatchObject({
      ok: false,
      problems: [
        {
          message: expect.stringMatching(/its bytes are image\/jpeg, the message says image\/png/) as unknown,
        },
      ],
    });
    const svgBytes = fixture('evil.svg');
    const svgHandle = `attachments/${crypto.createHash('sha256').update(svgBytes).digest('hex')}.png`;
    const svgLog = `${lines.slice(0, -1).join('\n').replaceAll(handle, svgHandle)}\n${JSON.stringify({ attachment: { handle: svgHandle, data: svgBytes.toString('base64') } })}`;
    expect(parseExport(svgLog)).toMatchObject({
      ok: false,
      problems: [{ message: expect.stringMatching(/SVG is not accepted/) as unknown }],
    });
    const stray = `attachments/${'0'.repeat(64)}.png`;
    expect(parseExport(withLast({ handle: stray, data: b64('red.png') }))).toMatchObject({
      ok: false,
      problems: [{ message: expect.stringMatching(/named by no user_message/) as unknown }],
    });
    expect(fs.existsSync(path.join(other, 'sessions'))).toBe(false);
  });
});
