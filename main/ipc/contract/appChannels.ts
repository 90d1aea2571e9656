import { z } from 'zod';
import { ProviderKind, ReasoningEffort } from '../../common/events.js';
import { ModelStatus, UtcDay } from '../../common/models.js';
import {
  ServedListSummary,
  folder,
  SettingsValue,
  SettingsView,
  AppCommand,
  empty,
  type ChannelSpec,
} from './schemas.js';

/** One MCP server as the settings screen shows it (mcp.servers). */
const McpServerView = z.object({
  name: z.string(),
  source: z.enum(['settings', 'project']),
  transport: z.enum(['stdio', 'http']),
  state: z.enum(['starting', 'ready', 'failed']),
  error: z.string().optional(),
  /** The last lines the server wrote to stderr (a failed start's reason). */
  stderrTail: z.string().optional(),
  tools: z.array(z.object({ name: z.string(), enabled: z.boolean() })),
});

/** A project's .mcp.json: absent, invalid, trusted (approved as it is) or untrusted (not started). */
const ProjectMcpView = z.object({
  file: z.string(),
  status: z.enum(['absent', 'invalid', 'trusted', 'untrusted']),
  servers: z.array(z.string()),
  /** Why an invalid file cannot be used. */
  error: z.string().optional(),
});

/** A project's rule: this MCP tool runs without asking in its sessions (a grant with scope tool). */
const ToolRuleView = z.object({
  project: z.string(),
  tool: z.string(),
  addedAt: z.string(),
  via: z.string(),
  sessionId: z.string().optional(),
});

/** The channels of settings, providers, projects and the app. */
export const appChannels = {
  'mcp.servers': {
    doc: "Starts every configured MCP server once in the box (settings', and the folder's .mcp.json when approved), lists its state and tools (each enabled or not), and stops it.",
    input: z.object({ folder: folder.optional() }),
    output: z.object({
      servers: z.array(McpServerView),
      /** The folder's .mcp.json (only with a folder). */
      project: ProjectMcpView.optional(),
    }),
  },
  'mcp.approveProject': {
    doc: "Approves the folder's .mcp.json as it is now (by its sha256, as keel mcp approve does): its servers start from the next turn; a later change asks again.",
    input: z.object({ folder }),
    output: z.object({ project: ProjectMcpView }),
  },
  'mcp.setToolEnabled': {
    doc: 'Switches one MCP tool (mcp__<server>__<tool>) on or off for every session from the next turn (settings.json mcp.disabledTools).',
    input: z.object({
      tool: z.string().regex(/^mcp__/, 'an MCP tool name (mcp__<server>__<tool>)'),
      enabled: z.boolean(),
    }),
    output: z.object({ disabledTools: z.array(z.string()) }),
  },
  'mcp.rules': {
    doc: 'The MCP tools that run without asking in a project (granted with scope tool; every project without a folder), from <home>/tool-rules.jsonl.',
    input: z.object({ folder: folder.optional() }),
    output: z.object({ rules: z.array(ToolRuleView) }),
  },
  'mcp.revokeRule': {
    doc: "Revokes a project's rule for one MCP tool: from the next turn its calls ask again in every session of the project.",
    input: z.object({ folder, tool: z.string().regex(/^mcp__/, 'an MCP tool name (mcp__<server>__<tool>)') }),
    output: z.object({ rules: z.array(ToolRuleView) }),
  },
  'settings.get': {
    doc: 'The settings, which provider keys are set (never their values) and where keys are kept.',
    input: empty,
    output: SettingsView,
  },
  'settings.set': {
    doc: "Replaces the settings and/or sets (string) or removes (null) provider keys and endpoints' own keys (by base URL); saved endpoints drop the keys of endpoints no longer listed; returns the new view.",
    input: z.object({
      settings: SettingsValue.optional(),
      keys: z
        .object({
          anthropic: z.string().min(1).nullable().optional(),
          openai: z.string().min(1).nullable().optional(),
          openaiCompatible: z.string().min(1).nullable().optional(),
          /** Issue #37: an OpenAI-compatible endpoint's own key, by its base URL. */
          endpoints: z
            .record(
              z.string().url('an endpoint key needs the endpoint’s base URL'),
              z.string().min(1).max(4096).nullable(),
            )
            .optional(),
        })
        .optional(),
    }),
    output: SettingsView,
  },
  'settings.testProvider': {
    doc: 'Sends a tiny request to a provider (stored key unless one is given) and reports whether it answered.',
    input: z.object({
      provider: ProviderKind,
      model: z.string().min(1),
      baseUrl: z.string().url().optional(),
      apiKey: z.string().min(1).optional(),
    }),
    output: z.object({
      ok: z.boolean(),
      /** What happened, in words (the provider's error when not ok). */
      message: z.string(),
      latencyMs: z.number().nonnegative(),
    }),
  },
  'providers.catalogue': {
    doc: "Known models (newest first per provider) with windows, output limits, lifecycle, whether they are priced and whether the provider's models endpoint lists them; the suggested model per provider; main's today.",
    input: empty,
    output: z.object({
      models: z.array(
        z.object({
          id: z.string(),
          provider: ProviderKind,
          contextWindow: z.number().int().positive(),
          /** The most output tokens one request may ask for; absent when not documented. */
          maxOutputTokens: z.number().int().positive().optional(),
          /** Deprecated models answer until `retiresOn`; retired ones fail every request. */
          status: ModelStatus,
          /** First day (UTC, YYYY-MM-DD) the provider no longer serves the model, when announced. */
          retiresOn: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}$/)
            .optional(),
          /** The provider's recommended replacement (it may be a model Keel does not list). */
          replacement: z.string().optional(),
          /** False when a billed rate is undocumented: its cost is unknown, never $0. */
          priced: z.boolean(),
          /**
           * Whether the provider's last read list (its default endpoint in settings) has it; absent when no
           * list was read. A listed model is served, whatever a catalogue date says.
           */
          listed: z.boolean().optional(),
          /** The reasoning efforts it takes (no `off` for a model that always reasons) and its default. */
          reasoning: z.object({ choices: z.array(ReasoningEffort), defaultEffort: ReasoningEffort }),
        }),
      ),
      /** The model a new session or a connection test suggests, per provider the catalogue covers. */
      suggested: z.partialRecord(ProviderKind, z.string()),
      /** Main's UTC day (its one clock): lifecycle is judged against this, never the page's clock. */
      today: UtcDay,
      /** The providers' model lists the answer used, with their age. */
      served: z.array(ServedListSummary),
    }),
  },
  'providers.refreshModels': {
    doc: "Reads a provider's models endpoint now (GET /v1/models) and caches it; fails with the provider's error in one line.",
    input: z.object({ provider: ProviderKind, baseUrl: z.string().url().optional() }),
    output: z.object({ served: ServedListSummary }),
  },
  // Issue #37 (Settings): an endpoint's models for the pickers.
  'providers.models': {
    doc: "Reads a provider endpoint's models now (GET /models, through main, with the stored or environment key), caches the list and returns its models; fails with the server's error in one line.",
    input: z.object({
      provider: ProviderKind.exclude(['local']),
      baseUrl: z
        .string()
        .regex(
          /^https?:\/\/[^\s/]/,
          'a base URL starting with http:// or https://, such as http://127.0.0.1:11434/v1',
        )
        .pipe(z.string().url('a base URL such as http://127.0.0.1:11434/v1'))
        .optional(),
    }),
    output: z.object({
      models: z.array(
        z.object({
          id: z.string(),
          /** Only when the server says it. */
          contextWindow: z.number().int().positive().optional(),
        }),
      ),
      served: ServedListSummary,
    }),
  },
  'providers.detectLocal': {
    doc: 'Looks for local OpenAI-compatible servers (Ollama :11434, LM Studio :1234) and lists their models.',
    input: empty,
    output: z.object({
      servers: z.array(z.object({ name: z.string(), baseUrl: z.string(), models: z.array(z.string()) })),
    }),
  },
  'projects.openFolder': {
    doc: 'Picks a project folder: the native dialog in the app (`path` is its start), the given `path` in `keel serve`.',
    input: z.object({ path: folder.optional() }),
    output: z.object({
      /** Absolute real path; null when the dialog was cancelled. */
      folder: z.string().nullable(),
    }),
  },
  'projects.recent': {
    doc: 'Recently used project folders, newest first, with whether they still exist.',
    input: empty,
    output: z.object({
      projects: z.array(z.object({ folder: z.string(), exists: z.boolean(), lastUsedAt: z.string() })),
    }),
  },
  'app.launchCommands': {
    doc: 'Takes the commands that arrived before the UI was listening (a folder passed at launch); call once after subscribing to app.command.',
    input: empty,
    output: z.object({ commands: z.array(AppCommand) }),
  },
  'app.info': {
    doc: 'Version, mode (electron or serve), platform, home folder and what sandbox confines commands here, and why.',
    input: empty,
    output: z.object({
      version: z.string(),
      mode: z.enum(['electron', 'serve']),
      platform: z.string(),
      home: z.string(),
      sandbox: z.object({
        kind: z.enum(['bwrap', 'sandbox-exec', 'none']),
        reason: z.string(),
        version: z.string().nullable(),
      }),
    }),
  },
} as const satisfies Record<string, ChannelSpec>;
