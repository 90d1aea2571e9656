import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../main/common/events.js';
import { createTurnHost } from '../../../main/core/harness/turnHost.js';
import { runTurn } from '../../../main/core/turn/engine.js';
import { toResponsesRequest } from '../../../main/providers/index.js';
import { useTurnHostFixture, writeMcpSettings } from '../../support/turnHost.js';

// An MCP tool's image reaches the model where the provider takes images in tool results: the real fixture
// server in the box, the real turn engine, the scripted provider speaking each wire format.
const SERVER = path.resolve('test/fixtures/mcp/server.mjs');
const IMAGE = 'mcp__fixture__image';

const fixture = useTurnHostFixture('keel-mcp-images-model-', {
  prepare: ({ home }) => writeMcpSettings(home, { fixture: { command: process.execPath, args: [SERVER] } }),
});

/** One turn in which the model calls the image tool; returns the log, the image's bytes and the second request. */
async function imageTurn(provider: 'anthropic' | 'openai-compatible') {
  const log = fixture.createSession({ policy: 'ask', toolMode: 'write', provider });
  fixture.server.enqueue(
    { kind: 'reply', text: '', toolCalls: [{ id: 'i1', name: IMAGE, arguments: {} }] },
    { kind: 'reply', text: 'a red dot' },
  );
  const host = await createTurnHost(log, {
    env: { PATH: process.env.PATH },
    keys: { anthropic: 'sk-ant-test' },
  });
  try {
    expect(await runTurn(host, { prompt: 'look' })).toEqual({ status: 'completed', text: 'a red dot' });
  } finally {
    await host.dispose?.();
  }
  const result = log
    .read()
    .find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result' && e.toolCallId === 'i1');
  const image = result?.images?.[0];
  if (!image) throw new Error('the result lists no image');
  const bytes = fs.readFileSync(path.join(log.artifactsDir, image.handle)).toString('base64');
  return { image, bytes, body: fixture.server.requests.at(-1)?.body as Record<string, unknown> };
}

describe.runIf(process.platform === 'linux')('MCP images to the model (bubblewrap)', () => {
  beforeEach((context) => {
    if (fixture.sandbox.kind !== 'bwrap') context.skip();
  });

  it('sends Anthropic the image as an image block of the tool_result, after its text', async () => {
    const { image, bytes, body } = await imageTurn('anthropic');
    expect(image.mimeType).toBe('image/png');
    const messages = body.messages as { role: string; content: { type: string; content?: unknown }[] }[];
    const result = messages.flatMap((m) => m.content).find((block) => block.type === 'tool_result');
    expect(result?.content).toEqual([
      { type: 'text', text: expect.stringContaining(`a red dot\n[image image/png`) as unknown },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: bytes } },
    ]);
  });

  it('tells a chat-completions model about the image in text, since its tool messages are text only', async () => {
    const { image, body } = await imageTurn('openai-compatible');
    const messages = body.messages as { role: string; content: unknown }[];
    const tool = messages.find((m) => m.role === 'tool');
    expect(tool?.content).toEqual(
      expect.stringContaining(
        `[image ${image.handle} (image/png) is not shown to this model: its API takes no images in tool results]`,
      ),
    );
    expect(JSON.stringify(body)).not.toContain('base64,');
  });
});

describe('the Responses API wire format', () => {
  it('sends an image as an input_image part of function_call_output, and a note when its bytes were not read', () => {
    const request = toResponsesRequest(
      {
        messages: [
          { role: 'user', content: 'look' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'c1', name: IMAGE, arguments: '{}' },
              { id: 'c2', name: IMAGE, arguments: '{}' },
            ],
          },
          {
            role: 'tool',
            toolCallId: 'c1',
            content: 'dot',
            images: [{ handle: 'a.png', mimeType: 'image/png', data: 'QUJD' }],
          },
          {
            role: 'tool',
            toolCallId: 'c2',
            content: 'old dot',
            images: [{ handle: 'b.png', mimeType: 'image/png' }],
          },
        ],
      },
      [],
    );
    const outputs = (request.input as { type?: string; output?: unknown }[]).filter(
      (item) => item.type === 'function_call_output',
    );
    expect(outputs.map((item) => item.output)).toEqual([
      [
        { type: 'input_text', text: 'dot' },
        { type: 'input_image', image_url: 'data:image/png;base64,QUJD' },
      ],
      'old dot\n[image b.png (image/png) is not attached to this request]',
    ]);
  });
});
