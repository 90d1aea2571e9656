import fs from 'node:fs';
import path from 'node:path';
import {
  approveProjectMcp,
  catalogueView,
  createProvider,
  detectSandbox,
  inspectMcpServers,
  listToolRules,
  McpAdminError,
  ModelChoiceError,
  type ProjectMcpStatus,
  ProviderError,
  type ProviderKeys,
  readSettings,
  refreshServedModels,
  revokeToolRule,
  setMcpToolEnabled,
  summarizeServed,
  toProviderError,
  writeSettings,
} from '../../core/harness/index.js';
import { endpointKeyOf } from '../../common/appSettings.js';
import type { SettingsValue } from '../contract.js';
import { IpcFailure } from '../errors.js';
import { readRecentProjects } from '../recentProjects.js';
import type { appChannels } from '../contract/appChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable, LocalServerCandidate } from './types.js';

/** The servers first run offers when they answer: Ollama and LM Studio on their default ports. */
export const LOCAL_SERVERS: readonly LocalServerCandidate[] = [
  { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1' },
  { name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1' },
];
const PROVIDER_TEST_TIMEOUT_MS = 20_000;
const LOCAL_PROBE_TIMEOUT_MS = 800;

/** The handlers of settings, providers, projects and the app. */
export function appHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof appChannels> {
  const { options, home, env, keyStore, clock, folderExists, useProject, settingsView } = ctx;
  /** The models a server lists now (its base URL given, else the provider's from settings); a refusal is `provider`. */
  const servedModels = async (
    provider: Parameters<typeof refreshServedModels>[0],
    baseUrl: string | undefined,
  ) => {
    try {
      return await refreshServedModels(provider, baseUrl ?? readSettings(home).providers[provider]?.baseUrl, {
        home,
        clock,
        keys: keyStore.read(),
        env,
      });
    } catch (error) {
      if (error instanceof ProviderError) throw new IpcFailure('provider', error.message);
      throw error;
    }
  };
  /**
   * Issue #37: a saved endpoint list drops the own keys of the endpoints no longer in it (removed, or their URL
   * changed): a key stays only with the server it was entered for. The default OpenAI-compatible URL keeps its.
   */
  const forgetRemovedEndpointKeys = (settings: SettingsValue) => {
    const kept = new Set((settings.endpoints ?? []).map((endpoint) => endpointKeyOf(endpoint.baseUrl)));
    const providerUrl = settings.providers['openai-compatible']?.baseUrl;
    if (providerUrl) kept.add(endpointKeyOf(providerUrl));
    const gone = Object.keys(keyStore.read().endpoints ?? {}).filter((url) => !kept.has(url));
    if (gone.length > 0) keyStore.write?.({ endpoints: Object.fromEntries(gone.map((url) => [url, null])) });
  };
  return {
    'mcp.servers': async (args) => {
      const inspection = await inspectMcpServers(home, args.folder, { env });
      return {
        servers: inspection.servers.map((server) => ({
          name: server.name,
          source: server.source,
          transport: server.transport,
          state: server.state.state,
          ...(server.state.state === 'failed'
            ? { error: server.state.error, stderrTail: server.state.stderrTail }
            : {}),
          tools: server.tools.map((name) => ({ name, enabled: !inspection.disabledTools.includes(name) })),
        })),
        ...(inspection.project ? { project: projectView(inspection.project) } : {}),
      };
    },

    'mcp.approveProject': (args) => {
      try {
        // The same core function as `keel mcp approve`: one approval event in <home>/mcp-approvals.jsonl.
        return { project: projectView(approveProjectMcp(home, args.folder, 'app settings')) };
      } catch (error) {
        if (error instanceof McpAdminError) throw new IpcFailure('invalid_state', error.message);
        throw error;
      }
    },

    'mcp.setToolEnabled': (args) => ({ disabledTools: setMcpToolEnabled(home, args.tool, args.enabled) }),

    'mcp.rules': (args) => ({ rules: listToolRules(home, args.folder) }),

    'mcp.revokeRule': (args) => {
      if (!revokeToolRule(home, args.folder, args.tool, 'app settings')) {
        throw new IpcFailure('not_found', `no rule for ${args.tool} in ${args.folder}`);
      }
      return { rules: listToolRules(home, args.folder) };
    },

    'settings.get': () => settingsView(),

    'settings.set': (args) => {
      if (args.keys && Object.keys(args.keys).length > 0) {
        if (!keyStore.write) {
          throw new IpcFailure(
            'not_available',
            'this host reads API keys from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, KEEL_OPENAI_COMPATIBLE_API_KEY); set them there and restart',
          );
        }
        keyStore.write(args.keys);
      }
      // The model corrections and MCP servers are kept unless the caller sends its own (older UIs do not
      // know them).
      if (args.settings) {
        const current = readSettings(home);
        if (args.settings.endpoints && keyStore.write) forgetRemovedEndpointKeys(args.settings);
        writeSettings(home, {
          ...args.settings,
          models: args.settings.models ?? current.models,
          notifications: args.settings.notifications ?? current.notifications,
          checkouts: args.settings.checkouts
            ? { ...args.settings.checkouts, kind: args.settings.checkouts.kind ?? current.checkouts.kind }
            : current.checkouts,
          endpoints: args.settings.endpoints ?? current.endpoints,
          appearance: args.settings.appearance ?? current.appearance,
          mcp: current.mcp,
        });
      }
      return settingsView();
    },

    'settings.testProvider': async (args) => {
      const settings = readSettings(home);
      const baseUrl = args.baseUrl ?? settings.providers[args.provider]?.baseUrl;
      const keyName = args.provider === 'openai-compatible' ? 'openaiCompatible' : args.provider;
      const keys: ProviderKeys = args.apiKey ? { [keyName]: args.apiKey } : keyStore.read();
      const started = performance.now();
      const signal = AbortSignal.timeout(PROVIDER_TEST_TIMEOUT_MS);
      try {
        const provider = createProvider(
          { provider: args.provider, ...(baseUrl ? { baseUrl } : {}) },
          keys,
          env,
        );
        for await (const event of provider.stream({
          payload: { messages: [{ role: 'user', content: 'Reply with the word OK.' }] },
          tools: [],
          model: args.model,
          maxOutputTokens: 16,
          signal,
        })) {
          if (event.type === 'text' || event.type === 'done' || event.type === 'tool_call') break;
        }
        return {
          ok: true,
          message: `${args.provider} answered with ${args.model}`,
          latencyMs: performance.now() - started,
        };
      } catch (error) {
        const failure = toProviderError(error, args.provider, signal);
        const message = signal.aborted
          ? `no answer within ${PROVIDER_TEST_TIMEOUT_MS / 1000} s`
          : failure.message;
        return { ok: false, message, latencyMs: performance.now() - started };
      }
    },

    'providers.catalogue': () => {
      try {
        return catalogueView(home, readSettings(home), clock);
      } catch (error) {
        if (error instanceof ModelChoiceError) throw new IpcFailure('invalid_input', error.message);
        throw error;
      }
    },

    'providers.refreshModels': async (args) => {
      const list = await servedModels(args.provider, args.baseUrl);
      return { served: summarizeServed(list, clock) };
    },

    'providers.models': async (args) => {
      const list = await servedModels(args.provider, args.baseUrl);
      return {
        models: list.models.map((model) => ({
          id: model.id,
          ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
        })),
        served: summarizeServed(list, clock),
      };
    },

    'providers.detectLocal': async () => {
      const candidates = options.localServers ?? LOCAL_SERVERS;
      const found = await Promise.all(candidates.map((candidate) => probeLocalServer(candidate)));
      return { servers: found.filter((server) => server !== undefined) };
    },

    'projects.openFolder': async (args) => {
      let chosen: string | null;
      if (options.pickFolder) chosen = await options.pickFolder(args.path);
      else if (args.path === undefined) {
        throw new IpcFailure('not_available', 'keel serve has no folder dialog: type the folder path');
      } else chosen = args.path;
      if (chosen === null) return { folder: null };
      const folder = path.resolve(chosen);
      if (!folderExists(folder))
        throw new IpcFailure('not_found', `${folder} does not exist or is not a folder`);
      const real = fs.realpathSync(folder);
      useProject(real);
      return { folder: real };
    },

    'projects.recent': () => ({
      projects: readRecentProjects(home).map((entry) => ({ ...entry, exists: folderExists(entry.folder) })),
    }),

    'app.launchCommands': () => ({ commands: options.takeLaunchCommands?.() ?? [] }),

    'app.info': async () => {
      const sandbox = await detectSandbox();
      return {
        version: options.version,
        mode: options.mode,
        platform: process.platform,
        home,
        sandbox: { kind: sandbox.kind, reason: sandbox.reason, version: sandbox.version },
      };
    },
  };
}

async function probeLocalServer(
  candidate: LocalServerCandidate,
): Promise<{ name: string; baseUrl: string; models: string[] } | undefined> {
  try {
    const response = await fetch(`${candidate.baseUrl}/models`, {
      signal: AbortSignal.timeout(LOCAL_PROBE_TIMEOUT_MS),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    const models = (body.data ?? []).flatMap((model) => (typeof model.id === 'string' ? [model.id] : []));
    return { name: candidate.name, baseUrl: candidate.baseUrl, models };
  } catch {
    return undefined;
  }
}

/** A project's .mcp.json status as the contract shows it. */
function projectView(status: ProjectMcpStatus) {
  return {
    file: status.file,
    status: status.status,
    servers: status.servers,
    ...(status.error !== undefined ? { error: status.error } : {}),
  };
}
