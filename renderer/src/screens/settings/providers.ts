import type { KeyName, ProviderKind } from '../../api/types.js';

/** The providers Keel speaks to, with the names people know them by. */
export const PROVIDERS: readonly { kind: ProviderKind; label: string; keyName: KeyName; keyEnv: string }[] = [
  { kind: 'anthropic', label: 'Anthropic', keyName: 'anthropic', keyEnv: 'ANTHROPIC_API_KEY' },
  { kind: 'openai', label: 'OpenAI', keyName: 'openai', keyEnv: 'OPENAI_API_KEY' },
  {
    kind: 'openai-compatible',
    label: 'Local / OpenAI-compatible',
    keyName: 'openaiCompatible',
    keyEnv: 'KEEL_OPENAI_COMPATIBLE_API_KEY',
  },
];

/**
 * The providers a session can be on: those above, and (issue 34) a local model Keel runs itself, which has no key
 * and no server (the provider select of the new-session dialog and of Settings' defaults).
 */
export const MODEL_PROVIDERS: readonly { kind: ProviderKind; label: string }[] = [
  ...PROVIDERS,
  { kind: 'local', label: 'Local model (run by Keel)' },
];

/** The approval policies, strictest first, with what each one lets run without asking. */
export const POLICIES = [
  { value: 'read-only', label: 'Read-only', hint: 'Only reading tools exist; nothing can be changed.' },
  { value: 'ask', label: 'Ask', hint: 'Every edit and command waits for your approval.' },
  { value: 'auto-edit', label: 'Auto-edit', hint: 'File edits run; commands wait for your approval.' },
  {
    value: 'full-auto',
    label: 'Full auto',
    hint: 'Edits and commands run inside the sandbox without asking.',
  },
] as const;
