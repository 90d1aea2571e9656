import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import { eventsOf, newSessionArgs, onlySessionId } from '../../support/sessionFixture.js';

// `keel run --image FILE` (issue #32): the files ride with the prompt, checked before any session is made.

const cli = useCliFixture('keel-cli-image-');
const FIXTURES = path.resolve('test/fixtures/attachments');

describe('keel run --image', () => {
  it('attaches each file (repeatable) and a vision model gets them as image parts', async () => {
    const args = newSessionArgs(cli, {
      policy: 'ask',
      prompt: 'what is on these?',
      extra: ['--image', path.join(FIXTURES, 'red.png'), '--image', path.join(FIXTURES, 'photo.jpg')],
    });
    // A model id of a vision family (the scripted server serves any id).
    args[args.indexOf('--model') + 1] = 'llava-scripted';
    const run = await keel(cli.home, args);
    expect(run.code, run.stderr).toBe(0);
    const message = eventsOf(cli.home, onlySessionId(cli.home)).find(
      (e): e is EventOf<'user_message'> => e.kind === 'user_message',
    );
    expect(message?.attachments?.map((file) => [file.name, file.mimeType])).toEqual([
      ['red.png', 'image/png'],
      ['photo.jpg', 'image/jpeg'],
    ]);
    const body = cli.server.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const user = body.messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'image_url', image_url: { url: expect.stringMatching(/^data:image\/png;base64,/) as unknown } },
      {
        type: 'image_url',
        image_url: { url: expect.stringMatching(/^data:image\/jpeg;base64,/) as unknown },
      },
      { type: 'text', text: 'what is on these?' },
    ]);
  });

  it('refuses an SVG or a missing file before making a session', async () => {
    const svg = await keel(
      cli.home,
      newSessionArgs(cli, {
        policy: 'ask',
        prompt: 'x',
        extra: ['--image', path.join(FIXTURES, 'evil.svg')],
      }),
    );
    expect(svg.code).not.toBe(0);
    expect(svg.stderr).toContain('--image: "evil.svg" is an SVG image: SVG is not accepted');
    const missing = await keel(
      cli.home,
      newSessionArgs(cli, {
        policy: 'ask',
        prompt: 'x',
        extra: ['--image', path.join(cli.project, 'nope.png')],
      }),
    );
    expect(missing.stderr).toContain('--image');
    expect(missing.stderr).toContain('nope.png');
    const sessions = path.join(cli.home, 'sessions');
    expect(fs.existsSync(sessions) ? fs.readdirSync(sessions) : []).toEqual([]);
    expect(cli.server.requests).toHaveLength(0);
  });
});
