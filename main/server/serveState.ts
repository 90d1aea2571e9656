import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/*
 * Issue #37: what `keel serve` keeps between runs, so a page reloaded after a restart finds the new server:
 * the port it last listened on and its access token, in <home>/serve.json (0600, the user's own file like
 * the keys). A restart listens on the same port (unless another program took it) and takes the same token,
 * so the tokened URL printed once keeps working; `keel serve --new-token` replaces the token.
 */

/** The file in the Keel home. */
export const SERVE_STATE_FILE = 'serve.json';

const ServeState = z.object({
  port: z.number().int().min(1).max(65_535),
  // 32 random bytes, base64url, as startKeelServer makes them.
  token: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});
export type ServeState = z.infer<typeof ServeState>;

/** The path of serve.json in `home`. */
export function serveStatePath(home: string): string {
  return path.join(home, SERVE_STATE_FILE);
}

/** The kept port and token, or undefined when there are none or the file is not in this shape. */
export function readServeState(home: string): ServeState | undefined {
  try {
    const parsed = ServeState.safeParse(JSON.parse(fs.readFileSync(serveStatePath(home), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes serve.json readable by its owner only (written whole, then renamed: never half a file). */
export function writeServeState(home: string, state: ServeState): void {
  fs.mkdirSync(home, { recursive: true });
  const file = serveStatePath(home);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(ServeState.parse(state), null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
}

/** A new access token: 32 random bytes, base64url. */
export function newServeToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}
