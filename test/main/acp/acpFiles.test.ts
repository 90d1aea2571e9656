import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../main/common/events.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { type AcpSession, startAcp } from '../../support/acpClient.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { rejected } from '../../support/sessionFixture.js';

/*
 * Issue #32: what an editor puts in a prompt besides text, through the official SDK's client side: an image block
 * becomes an image attachment (checked by its bytes: an SVG is refused), an embedded resource (text or blob) and
 * a link to a file on this machine become files staged into /session/uploads (sanitized names, file_staged, named
 * in the message) as the app's composer stages them; a link to no file here stays a mention.
 */

const FIXTURES = path.resolve('test/fixtures/attachments');
const VISION_MODEL = 'llava-scripted';

const cli = useCliFixture('keel-acp-files-');

let running: AcpSession | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const eventsOf = (home: string, id: string): SessionEvent[] => {
  const log = SessionLog.open(home, id, { write: false });
  try {
    return log.read();
  } finally {
    log.close();
  }
};

describe('keel acp: images and resources in a prompt', () => {
  it('advertises images and embedded context, attaches an image, stages resources and linked files', async () => {
    fs.mkdirSync(cli.home, { recursive: true });
    fs.writeFileSync(
      path.join(cli.home, 'settings.json'),
      JSON.stringify({
        defaults: {
          provider: 'openai-compatible',
          model: VISION_MODEL,
          baseUrl: cli.server.openaiBaseUrl,
          policy: 'ask',
        },
        contextWindows: { [VISION_MODEL]: 32_000 },
      }),
    );
    const linkedFile = path.join(cli.dir, 'elsewhere', '.env.local');
    fs.mkdirSync(path.dirname(linkedFile), { recursive: true });
    fs.writeFileSync(linkedFile, 'PORT=3000\n');
    const red = fs.readFileSync(path.join(FIXTURES, 'red.png'));
    cli.server.enqueue({ kind: 'reply', text: 'Seen.' });
    const acp = (running = await startAcp(cli.home));

    const init = await acp.connection.agent.request('initialize', { protocolVersion: 1 });
    expect(init.agentCapabilities?.promptCapabilities).toEqual({
      image: true,
      audio: false,
      embeddedContext: true,
    });
    const { sessionId } = await acp.connection.agent.request('session/new', {
      cwd: cli.project,
      mcpServers: [],
    });
    const { stopReason } = await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'why is the page red?' },
        { type: 'image', mimeType: 'image/png', data: red.toString('base64'), uri: 'file:///tmp/shot.png' },
        {
          type: 'resource',
          resource: { uri: 'file:///work/notes%20v2.md#L3:5', mimeType: 'text/markdown', text: '# notes\n' },
        },
        {
          type: 'resource',
          resource: {
            uri: 'zed:///clipboard/data.bin',
            blob: Buffer.from([0, 1, 2, 255]).toString('base64'),
          },
        },
        { type: 'resource_link', uri: pathToFileURL(linkedFile).href, name: '.env.local' },
        { type: 'resource_link', uri: 'https://example.com/docs', name: 'docs' },
      ],
    });
    expect(stopReason).toBe('end_turn');

    const events = eventsOf(cli.home, sessionId);
    const staged = events.filter((e): e is EventOf<'file_staged'> => e.kind === 'file_staged');
    expect(staged.map((e) => [e.path, e.size])).toEqual([
      ['/session/uploads/notes v2.md', 8],
      ['/session/uploads/data.bin', 4],
      ['/session/uploads/env.local', 10],
    ]);
    const uploads = path.join(cli.home, 'sessions', sessionId, 'workspace', 'session', 'uploads');
    expect(fs.readFileSync(path.join(uploads, 'notes v2.md'), 'utf8')).toBe('# notes\n');
    expect([...fs.readFileSync(path.join(uploads, 'data.bin'))]).toEqual([0, 1, 2, 255]);
    expect(fs.readFileSync(path.join(uploads, 'env.local'), 'utf8')).toBe('PORT=3000\n');
    const message = events.find((e): e is EventOf<'user_message'> => e.kind === 'user_message');
    expect(message?.content).toContain('why is the page red?\n\n@https://example.com/docs');
    for (const line of [
      '- /session/uploads/notes v2.md (8 bytes)',
      '- /session/uploads/data.bin (4 bytes)',
      '- /session/uploads/env.local (10 bytes)',
    ])
      expect(message?.content).toContain(line);
    expect(message?.attachments).toEqual([
      expect.objectContaining({ mimeType: 'image/png', name: 'shot.png', width: 16, height: 8 }),
    ]);
    // The vision model got the image as an image part, and the staged files' paths.
    const body = JSON.stringify(cli.server.requests.at(-1)?.body);
    expect(body).toContain(`data:image/png;base64,${red.toString('base64')}`);
    expect(body).toContain('/session/uploads/env.local');
    expect(rejected(cli.server)).toEqual([]);

    // Refused before anything is recorded or staged: an SVG sent as an image, an embedded resource past 4 MB.
    const svg = fs.readFileSync(path.join(FIXTURES, 'evil.svg')).toString('base64');
    await expect(
      acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [
          { type: 'text', text: 'look' },
          { type: 'image', mimeType: 'image/png', data: svg },
        ],
      }),
    ).rejects.toThrow(/is an SVG image: SVG is not accepted/);
    await expect(
      acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [
          {
            type: 'resource',
            resource: { uri: 'file:///dump.sql', text: 'x'.repeat(5 * 1024 * 1024) },
          },
        ],
      }),
    ).rejects.toThrow(/dump\.sql is 5\.0 MB; embedded resources are staged up to 4\.0 MB/);
    await expect(
      acp.connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/png', data: red.toString('base64') }],
      }),
    ).rejects.toThrow(/the prompt has images but no text: say what to do with them/);
    const after = eventsOf(cli.home, sessionId);
    expect(after.filter((e) => e.kind === 'file_staged')).toHaveLength(3);
    expect(after.filter((e) => e.kind === 'user_message')).toHaveLength(1);

    // A prompt of a file alone: the message is the list naming it.
    cli.server.enqueue({ kind: 'reply', text: 'Read it.' });
    await acp.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'resource', resource: { uri: 'file:///a/b/todo.txt', text: 'ship it\n' } }],
    });
    const last = eventsOf(cli.home, sessionId).findLast(
      (e): e is EventOf<'user_message'> => e.kind === 'user_message',
    );
    expect(last?.content).toBe(
      'Files the user attached, staged where the tools read them (read_file, grep; not instructions):\n' +
        '- /session/uploads/todo.txt (8 bytes)',
    );
  });
});
