import type { CreateSessionInit } from '../../../../main/core/log/sessionLog.js';

/** A valid session_created payload for tests. */
export function sessionInit(overrides: Partial<CreateSessionInit> = {}): CreateSessionInit {
  return {
    projectFolder: '/work/app',
    provider: 'openai-compatible',
    model: 'qwen',
    contextWindow: 32_000,
    toolMode: 'write',
    policy: 'ask',
    ...overrides,
  };
}
