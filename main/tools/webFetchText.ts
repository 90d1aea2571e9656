import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { looksBinary } from './outcome.js';

/*
 * What web_fetch makes of a response body (issue #32): HTML becomes Markdown (Readability picks the main
 * content, as Firefox's reader view does; Turndown writes it as Markdown; a page Readability finds no article
 * in is converted whole, scripts and styles removed), other text types stay text, binaries are refused.
 */

/** How a content type is read: as HTML, as text, or not at all. An empty type is decided by the bytes. */
export function contentKind(contentType: string): 'html' | 'text' | 'binary' | 'sniff' {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type === '') return 'sniff';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type.startsWith('text/')) return 'text';
  if (
    /^application\/(json|xml|javascript|ecmascript|x-javascript|x-sh|x-yaml|yaml|toml|x-toml|graphql|sql|ld\+json)$/.test(
      type,
    )
  )
    return 'text';
  if (/^application\/[\w.-]+\+(json|xml|yaml)$/.test(type)) return 'text';
  return 'binary';
}

/** The charset a content type names, when TextDecoder knows it; else UTF-8. */
function decoderFor(contentType: string): { decode(input: Uint8Array): string } {
  const label = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(label ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** A page as the model reads it, or why it is not read. */
export type PageText =
  { ok: true; text: string; title?: string; format: 'markdown' | 'text' } | { ok: false; message: string };

/** Turns a response body into text: HTML → Markdown, text as it is (decoded), binaries refused. */
export function pageText(body: Buffer, contentType: string, url: string): PageText {
  let kind = contentKind(contentType);
  if (kind === 'sniff') {
    if (looksBinary(body)) kind = 'binary';
    else
      kind = /^\s*(<!doctype html|<html)/i.test(body.subarray(0, 512).toString('latin1')) ? 'html' : 'text';
  }
  if (kind === 'binary') {
    return {
      ok: false,
      message: `the response is ${contentType || 'binary data'}, not text: web_fetch reads pages and text files only`,
    };
  }
  const decoded = decoderFor(contentType).decode(body);
  if (kind === 'text') return { ok: true, text: decoded, format: 'text' };
  return { ok: true, format: 'markdown', ...htmlToMarkdown(decoded, url) };
}

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
});
turndown.remove(['script', 'style', 'noscript', 'iframe', 'template']);

/** The part of a linkedom document this file uses (linkedom's own types need the DOM library). */
type LinkedDocument = { title?: string; body: LinkedElement | null };

/** linkedom's parser, typed by what this file uses of it. */
const parseDocument = (html: string): LinkedDocument =>
  (parseHTML as unknown as (text: string) => { document: LinkedDocument })(html).document;

type ReadabilityInput = ConstructorParameters<typeof Readability>[0];

/** The main content of an HTML page as Markdown, and its title. */
export function htmlToMarkdown(html: string, url: string): { text: string; title?: string } {
  const document = parseDocument(html);
  const title = document.title?.trim() || undefined;
  let content: string | null | undefined;
  try {
    // Readability changes the document it reads: give it its own copy.
    content = new Readability(parseDocument(html) as unknown as ReadabilityInput, {
      charThreshold: 200,
    }).parse()?.content;
  } catch {
    content = undefined;
  }
  const root = content ? parseDocument(`<html><body>${content}</body></html>`).body : document.body;
  absolutizeLinks(root, url);
  const text = root ? turndown.turndown(root) : '';
  return { text: text.trim(), ...(title ? { title } : {}) };
}

/** The part of a linkedom element the link fix-up uses. */
type LinkedElement = {
  querySelectorAll(selector: string): Iterable<LinkedElement>;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
};

/** Relative links and images resolved against the page's URL, so the model can fetch them next. */
function absolutizeLinks(root: LinkedElement | null, base: string): void {
  if (!root) return;
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of Array.from(root.querySelectorAll(selector))) {
      const value = element.getAttribute(attribute);
      if (value === null) continue;
      try {
        element.setAttribute(attribute, new URL(value, base).href);
      } catch {
        // Not a URL: left as written.
      }
    }
  }
}
