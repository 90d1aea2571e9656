import { z } from 'zod';

/*
 * Issue #37 (Settings): the parts of settings.json the app's own screens edit beyond providers and defaults:
 * named OpenAI-compatible endpoints and the theme. Imports only zod: the store, the contract and the renderer
 * share these shapes.
 */

/** An endpoint's name as the pickers show it: short, one line. */
export const EndpointName = z
  .string()
  .trim()
  .min(1, 'an endpoint needs a name')
  .max(60, 'an endpoint name is at most 60 characters')
  .regex(/^[^\n\r\t]+$/, 'an endpoint name is one line');

/**
 * One OpenAI-compatible server (Ollama, LM Studio, vLLM, a gateway): its name and base URL. Its requests use
 * its own key when one is stored for its base URL, else the shared OpenAI-compatible key
 * (KEEL_OPENAI_COMPATIBLE_API_KEY or the stored one); its models are read from the server's `GET /models`,
 * through main.
 */
export const OpenAiEndpoint = z
  .object({
    name: EndpointName,
    baseUrl: z
      .string()
      .regex(/^https?:\/\/[^\s/]/, 'an endpoint needs its base URL, e.g. http://127.0.0.1:11434/v1')
      .pipe(z.string().url('an endpoint needs its base URL, e.g. http://127.0.0.1:11434/v1')),
  })
  .strict();
export type OpenAiEndpoint = z.infer<typeof OpenAiEndpoint>;

/** The endpoints, names unique (case-insensitive) so a picker can tell them apart. */
export const OpenAiEndpoints = z.array(OpenAiEndpoint).superRefine((endpoints, context) => {
  const seen = new Set<string>();
  endpoints.forEach((endpoint, index) => {
    const key = endpoint.name.toLowerCase();
    if (seen.has(key))
      context.addIssue({
        code: 'custom',
        path: [index, 'name'],
        message: `two endpoints are named ${endpoint.name}`,
      });
    seen.add(key);
  });
});

/** `system` follows the OS (prefers-color-scheme); `light` and `dark` hold whatever the OS says. */
export const Theme = z.enum(['system', 'light', 'dark']);
export type Theme = z.infer<typeof Theme>;

export const Appearance = z.object({ theme: Theme }).strict();
export type Appearance = z.infer<typeof Appearance>;

/**
 * Issue #37: what an endpoint's own API key is stored under: its base URL as the URL parser spells it (scheme and
 * host lower case, default port dropped) without trailing slashes. By URL, not by name: a key is sent only to the
 * server it was entered for, so a changed URL needs its key again. A value that is not a URL is kept trimmed.
 */
export function endpointKeyOf(baseUrl: string): string {
  try {
    return new URL(baseUrl.trim()).href.replace(/\/+$/, '');
  } catch {
    return baseUrl.trim();
  }
}
