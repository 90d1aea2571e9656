import {
  configuredMcpServers,
  logoutMcpServer,
  McpAdminError,
  type McpSignIn,
  removeMcpServer,
  saveMcpServer,
  startMcpSignIn,
} from '../../core/harness/index.js';
import type { mcpChannels } from '../contract/mcpChannels.js';
import { IpcFailure } from '../errors.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** An admin refusal as the contract's `invalid_input`, with its one line. */
function refusing<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof McpAdminError) throw new IpcFailure('invalid_input', error.message);
    throw error;
  }
}

/** Issue 33's Settings → MCP servers: thin adapters over core/mcp/serverFields.ts and auth.ts, as `keel mcp` is. */
export function mcpHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof mcpChannels> {
  const { home, options } = ctx;
  // One sign-in per server at a time; a new one replaces the old (its redirect closes when it times out).
  const signIns = new Map<string, McpSignIn>();
  const configured = () => configuredMcpServers(home);
  return {
    'mcp.configured': () => configured(),

    'mcp.saveServer': (args) => {
      refusing(() => saveMcpServer(home, args.name, args.fields, args.replacing));
      return configured();
    },

    'mcp.removeServer': (args) => {
      refusing(() => {
        // A URL server's grant goes with it (its file is named by name and URL: it would only be litter).
        const server = configured().servers.find((s) => s.name === args.name);
        if (server?.transport === 'http') logoutMcpServer(home, args.name);
        removeMcpServer(home, args.name);
      });
      return configured();
    },

    'mcp.signIn': async (args) => {
      const server = configured().servers.find((s) => s.name === args.name);
      if (!server?.fields.url) {
        throw new IpcFailure('invalid_input', `no MCP server "${args.name}" with a URL in your settings`);
      }
      const own = new URL(server.fields.url).host;
      const signIn = startMcpSignIn(home, args.name, { networkAllow: [own, ...args.allowHosts] });
      signIns.set(args.name, signIn);
      let url: string | undefined;
      try {
        url = await signIn.url;
      } catch (error) {
        signIns.delete(args.name);
        if (error instanceof McpAdminError) throw new IpcFailure('invalid_state', error.message);
        throw error;
      }
      // Only a web address goes to the system browser (the URL is the authorization server's word).
      const opened = url !== undefined && /^https?:\/\//i.test(url) && options.openExternal !== undefined;
      if (opened && url !== undefined) options.openExternal?.(url);
      return { ...(url !== undefined ? { url } : {}), opened };
    },

    'mcp.signInWait': async (args) => {
      const signIn = signIns.get(args.name);
      if (!signIn) throw new IpcFailure('invalid_state', `no sign-in of "${args.name}" is waiting`);
      try {
        await signIn.done;
      } catch (error) {
        if (error instanceof McpAdminError) throw new IpcFailure('invalid_state', error.message);
        throw error;
      } finally {
        if (signIns.get(args.name) === signIn) signIns.delete(args.name);
      }
      return configured();
    },

    'mcp.signOut': (args) => {
      refusing(() => logoutMcpServer(home, args.name));
      return configured();
    },
  };
}
