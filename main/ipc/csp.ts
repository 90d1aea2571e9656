/**
 * The Content-Security-Policy of the renderer, shared by the Electron `keel://` scheme and `keel serve` so both
 * run the UI under the same rules: scripts, workers and fonts only from the app itself, no eval, no inline
 * scripts, no plugins, no framing, no form posts. Monaco's inline styles are the one allowance
 * (`style-src 'unsafe-inline'`); images may also be data: URIs (inlined icons).
 */
export function buildContentSecurityPolicy(options: { connectSources?: readonly string[] } = {}): string {
  const directives: [string, ...string[]][] = [
    ['default-src', "'none'"],
    ['script-src', "'self'"],
    ['style-src', "'self'", "'unsafe-inline'"],
    ['img-src', "'self'", 'data:'],
    ['font-src', "'self'", 'data:'],
    ['connect-src', "'self'", ...(options.connectSources ?? [])],
    ['worker-src', "'self'"],
    ['manifest-src', "'self'"],
    ['base-uri', "'none'"],
    ['form-action', "'none'"],
    ['frame-ancestors', "'none'"],
    ['frame-src', "'none'"],
    ['object-src', "'none'"],
  ];
  return directives.map((parts) => parts.join(' ')).join('; ');
}
