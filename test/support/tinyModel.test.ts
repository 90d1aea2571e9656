import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaChat, type Llama, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_ANSWER, TINY_CHAT_TEMPLATE, writeTinyModel } from './tinyModel.js';

/** The tiny GGUF the local provider's tests rely on: loaded by the real runtime, behaving as designed. */
let dir: string;
let llama: Llama;
let model: LlamaModel;
const file = (): string => join(dir, 'tiny.gguf');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-tiny-'));
  writeTinyModel(file());
  llama = await getLlama({ gpu: false, build: 'never' });
  model = await llama.loadModel({ modelPath: file() });
});
afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const readFile = {
  read_file: {
    description: 'Read a file',
    params: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
} as const;

describe('the tiny GGUF', () => {
  it('is a GGUF v3 file whose metadata the runtime reads back', () => {
    const head = readFileSync(file()).subarray(0, 8);
    expect(head.subarray(0, 4).toString('ascii')).toBe('GGUF');
    expect(head.readUInt32LE(4)).toBe(3);
    expect(model.fileInfo.metadata.general.architecture).toBe('llama');
    expect(model.fileInfo.metadata.tokenizer.chat_template).toBe(TINY_CHAT_TEMPLATE);
    expect(model.trainContextSize).toBe(8192);
    expect(model.tokens.eos).not.toBeNull();
  });

  it('streams text, calls a function under grammar, then answers after the result', async () => {
    // One thread: llama.cpp's worker threads spin at each barrier, which on a busy 2-core machine costs 20x.
    const context = await model.createContext({ contextSize: 2048, threads: 1 });
    try {
      const chat = new LlamaChat({ contextSequence: context.getSequence() });
      expect(chat.chatWrapper.wrapperName).toBe('ChatML');
      const chunks: string[] = [];
      const plain = await chat.generateResponse(
        [
          { type: 'user', text: 'hello' },
          { type: 'model', response: [] },
        ],
        {
          maxTokens: 8,
          onTextChunk: (t) => chunks.push(t),
        },
      );
      expect(plain.response).toMatch(/^\|\|call: ("a)+/);
      expect(chunks.length).toBeGreaterThan(1);
      expect(plain.metadata.stopReason).toBe('maxTokens');

      const called = await chat.generateResponse(
        [
          { type: 'user', text: 'hello' },
          { type: 'model', response: [] },
        ],
        {
          maxTokens: 40,
          functions: readFile,
        },
      );
      expect(called.metadata.stopReason).toBe('functionCalls');
      const call = called.functionCalls![0]!;
      expect(call.functionName).toBe('read_file');
      expect(typeof (call.params as { path: unknown }).path).toBe('string');

      const answered = await chat.generateResponse(
        [
          { type: 'user', text: 'hello' },
          {
            type: 'model',
            response: [
              {
                type: 'functionCall',
                name: call.functionName,
                params: call.params,
                result: 'no such file',
                rawCall: call.raw,
              },
            ],
          },
        ],
        { maxTokens: 40, functions: readFile },
      );
      expect(answered.response).toBe(TINY_ANSWER);
      expect(answered.metadata.stopReason).toBe('eogToken');
    } finally {
      await context.dispose();
    }
  });
});
