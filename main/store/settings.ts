import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ModelOverride } from '../common/models.js';
import { Policy, ProviderKind } from '../common/events.js';
import { McpServerConfig, McpServerName } from '../common/mcp.js';
import { NotificationSettings } from '../common/notifications.js';
import { Appearance, OpenAiEndpoints } from '../common/appSettings.js';

/**
 * `<home>/settings.json`: defaults for new sessions, per-model context windows, provider base URLs and
 * compaction settings. API keys are never stored here (the app keeps them in the OS keychain; the CLI
 * reads the environment).
 */
export const Settings = z
  .object({
    defaults: z
      .object({
        provider: ProviderKind.optional(),
        model: z.string().min(1).optional(),
        baseUrl: z.string().url().optional(),
        policy: Policy.optional(),
        networkAllow: z.array(z.string().min(1)).optional(),
        /** A new session's spend cap (#31) in USD and in tokens, unless its creator gives one. */
        budget: z
          .object({ usd: z.number().positive().optional(), tokens: z.number().int().positive().optional() })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    /** Context windows of models the catalogue does not know (local ones), by model id. */
    contextWindows: z.record(z.string(), z.number().int().positive()).default({}),
    /**
     * Corrections and additions to the built-in model catalogue, by model id: a model newer than this Keel
     * (provider and contextWindow), or a lifecycle the provider changed (status, retiresOn, replacement).
     */
    models: z.record(z.string().min(1), ModelOverride).default({}),
    providers: z
      .object({
        anthropic: z.object({ baseUrl: z.string().url().optional() }).strict().optional(),
        openai: z.object({ baseUrl: z.string().url().optional() }).strict().optional(),
        'openai-compatible': z.object({ baseUrl: z.string().url().optional() }).strict().optional(),
        // Issue 34: a local model has no endpoint; `threads` is what new sessions on one pin (CPU threads for
        // llama.cpp; absent, its own choice: the machine's performance cores).
        local: z
          .object({ baseUrl: z.string().url().optional(), threads: z.number().int().positive().optional() })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    compaction: z
      .object({
        /** Fraction of the context window at which to compact; 0 turns automatic compaction off. */
        threshold: z.number().min(0).max(0.95).default(0.75),
        /** Fraction of the window kept verbatim after a compaction. */
        keepRecent: z.number().min(0).max(0.5).default(0.2),
      })
      .strict()
      .default({ threshold: 0.75, keepRecent: 0.2 }),
    /** MCP servers for every project (main/mcp), and tools (`mcp__<server>__<tool>`) switched off. */
    mcp: z
      .object({
        servers: z.record(McpServerName, McpServerConfig).default({}),
        disabledTools: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ servers: {}, disabledTools: [] }),
    /**
     * Issue #36: the disk sessions' checkouts may take in all (MiB); past it, after a turn, the checkouts of
     * sessions idle at least `idleMinutes` are reclaimed, oldest first (their next turn makes them again).
     */
    checkouts: z
      .object({
        storageLimitMB: z.number().int().min(0).default(2048),
        idleMinutes: z.number().min(0).default(60),
        /**
         * What a new checkout is: `copy` (a full copy), `view` (a copy-on-write view where the machine can, else a
         * copy), `auto` (Keel's choice: a view where the machine can, else a copy; main/core/persistent/README.md #36).
         */
        kind: z.enum(['auto', 'copy', 'view']).default('auto'),
      })
      .strict()
      .default({ storageLimitMB: 2048, idleMinutes: 60, kind: 'auto' }),
    /** Issue #32: which turn endings the app notifies of while its window is not focused. */
    notifications: NotificationSettings.default({ approval: true, finished: true, failed: true }),
    /** Issue #37: named OpenAI-compatible endpoints the pickers offer (each with the models its server lists). */
    endpoints: OpenAiEndpoints.default([]),
    /** Issue #37: the app's theme. */
    appearance: Appearance.default({ theme: 'system' }),
  })
  .strict();
export type Settings = z.infer<typeof Settings>;

/** Thrown when settings.json exists but is not valid; the message names the file and the problem. */
export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Reads `<home>/settings.json` (defaults when it does not exist); throws SettingsError naming the problem. */
export function readSettings(home: string): Settings {
  const file = path.join(home, 'settings.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Settings.parse({});
    throw new SettingsError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new SettingsError(`${file} is not valid JSON (${(error as Error).message})`);
  }
  const parsed = Settings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SettingsError(
      `${file}: ${issue ? `${issue.path.join('.') || '(top level)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}

/** Writes settings atomically (temp file + rename), validated first, so a crash never leaves half a file. */
export function writeSettings(home: string, settings: Settings): void {
  const valid = Settings.parse(settings);
  fs.mkdirSync(home, { recursive: true });
  const file = path.join(home, 'settings.json');
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
}
