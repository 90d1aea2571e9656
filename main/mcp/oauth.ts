import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/*
 * OAuth 2.1 for Streamable HTTP servers, on the MCP SDK's auth support (discovery of the protected resource's
 * and the authorization server's metadata, dynamic client registration, PKCE, refresh). Keel's part is where
 * the grant lives: a `CredentialVault` the core hands in (encrypted in the Keel home, which no box sees), so
 * tokens never reach the box, the log, exports or the model. Sign-in happens outside a turn (`keel mcp login`,
 * the app); a turn only uses and refreshes what is stored, and a server whose grant is gone fails saying so.
 */

/** What Keel keeps for one server: the registered client, the tokens, and a sign-in's PKCE verifier. */
export type McpCredentials = {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the tokens were saved (ms since the epoch): with `expires_in`, whether the access token has expired. */
  tokensSavedAt?: number;
  codeVerifier?: string;
  /** The server refused the stored grant (revoked, or its client forgotten): the state says to sign in again. */
  revoked?: boolean;
};

/** Where a server's credentials are kept (encrypted at rest by its owner). */
export type CredentialVault = {
  load(): McpCredentials | undefined;
  save(credentials: McpCredentials): void;
};

/** The redirect a stored grant's provider names; a turn never reaches the step that would use it. */
const STORED_REDIRECT = 'http://127.0.0.1/callback';

/** A turn's provider: stored grant only; an expired one is refreshed by the SDK, a missing one is a clear error. */
export function storedAuthProvider(server: string, vault: CredentialVault): OAuthClientProvider {
  // An interactive client (the SDK refreshes only then); a turn never opens the browser: it says to sign in.
  return new VaultProvider(server, vault, STORED_REDIRECT, () => {
    throw new Error(
      `MCP server "${server}" needs a sign-in: run keel mcp login ${server} (or sign in in Settings)`,
    );
  });
}

/** A sign-in's provider: the SDK's authorization URL goes to `open` (the browser, or a printed line). */
export function signInAuthProvider(
  server: string,
  vault: CredentialVault,
  redirectUrl: string,
  open: (url: URL) => void | Promise<void>,
  state: string,
): OAuthClientProvider {
  return new VaultProvider(server, vault, redirectUrl, open, state);
}

class VaultProvider implements OAuthClientProvider {
  constructor(
    private readonly server: string,
    private readonly vault: CredentialVault,
    private readonly redirect: string | undefined,
    private readonly open: (url: URL) => void | Promise<void>,
    private readonly stateValue?: string,
  ) {}

  get redirectUrl(): string | undefined {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Keel',
      redirect_uris: this.redirect ? [this.redirect] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return this.stateValue ?? '';
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.vault.load()?.client;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.vault.save({ ...this.vault.load(), client });
  }

  tokens(): OAuthTokens | undefined {
    return this.vault.load()?.tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    // The verifier served its one exchange: it is not kept beside the grant.
    const { codeVerifier: _used, revoked: _old, ...rest } = this.vault.load() ?? {};
    this.vault.save({ ...rest, tokens, tokensSavedAt: Date.now() });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    await this.open(url);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.vault.save({ ...this.vault.load(), codeVerifier });
  }

  codeVerifier(): string {
    const verifier = this.vault.load()?.codeVerifier;
    if (!verifier) throw new Error(`no sign-in of MCP server "${this.server}" is in progress`);
    return verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    // A revoked grant (or a client the server forgot) is dropped, so the state says "sign in again".
    const current = this.vault.load() ?? {};
    const hadGrant = current.tokens !== undefined;
    const dropped = { tokens: undefined, tokensSavedAt: undefined, ...(hadGrant ? { revoked: true } : {}) };
    if (scope === 'all') return this.vault.save(hadGrant ? { revoked: true } : {});
    if (scope === 'client') return this.vault.save({ ...current, client: undefined, ...dropped });
    if (scope === 'tokens') return this.vault.save({ ...current, ...dropped });
    if (scope === 'verifier') return this.vault.save({ ...current, codeVerifier: undefined });
  }
}
