import { sniffAttachmentType } from '../../main/common/attachments.js';

/*
 * What the scripted server rejects in a request's images and documents, in the providers' own words (issue
 * #32): a block of the wrong shape for the format, a media type the bytes are not, base64 that is not, a data
 * URL that is none. Shapes from the providers' API references: Anthropic `image` / `document` blocks with a
 * `base64` source; OpenAI Responses `input_image` (`image_url` a data URL) and `input_file` (`file_data`, with
 * `filename`); chat completions `image_url` parts (`{url}`).
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** The bytes of strict base64, or undefined when the text is not base64. */
function decodeBase64(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || text === '' || text.length % 4 !== 0) return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** A `data:<type>;base64,<data>` URL split, or undefined. */
function parseDataUrl(url: unknown): { mimeType: string; data: Buffer } | undefined {
  if (typeof url !== 'string') return undefined;
  const match = /^data:([a-z]+\/[a-z0-9.+-]+);base64,(.*)$/s.exec(url);
  const data = match && decodeBase64(match[2]);
  return match && data ? { mimeType: match[1] as string, data } : undefined;
}

/** Anthropic: every image and document block (also inside tool_result content) well formed and truthful. */
export function validateAnthropicMedia(body: Json): string | null {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]) : [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message) || !Array.isArray(message['content'])) continue;
    const blocks = (message['content'] as unknown[]).flatMap((block) =>
      isObject(block) && block['type'] === 'tool_result' && Array.isArray(block['content'])
        ? [block, ...(block['content'] as unknown[])]
        : [block],
    );
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j];
      if (!isObject(block) || (block['type'] !== 'image' && block['type'] !== 'document')) continue;
      if (block['type'] === 'image' && message['role'] !== 'user')
        return `messages.${i}.content.${j}: images are only allowed in user messages`;
      const at = `messages.${i}.content.${j}.${String(block['type'])}.source`;
      const source = block['source'];
      if (!isObject(source)) return `${at}: Field required`;
      if (source['type'] === 'url') {
        if (typeof source['url'] !== 'string') return `${at}.url: Field required`;
        continue;
      }
      if (source['type'] !== 'base64')
        return `${at}: Input tag '${String(source['type'])}' found using 'type' does not match any of the expected tags`;
      const allowed = block['type'] === 'image' ? IMAGE_TYPES : ['application/pdf'];
      if (!allowed.includes(String(source['media_type']))) {
        return `${at}.base64.media_type: Input should be ${allowed.map((t) => `'${t}'`).join(', ')}`;
      }
      const data = decodeBase64(source['data']);
      if (!data) return `${at}.base64.data: invalid base64 data`;
      if (sniffAttachmentType(data) !== source['media_type']) {
        return block['type'] === 'image'
          ? `${at}.base64: Image does not match the provided media type ${String(source['media_type'])}`
          : `${at}.base64: The PDF specified was not valid.`;
      }
    }
  }
  return null;
}

const CHAT_PART_TYPES = ['text', 'image_url', 'input_audio', 'file'];

/** Chat completions: a user message's parts are of the known types; an image part is `{image_url: {url}}`. */
export function validateChatMedia(body: Json): string | null {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]) : [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message) || !Array.isArray(message['content'])) continue;
    const parts = message['content'] as unknown[];
    for (let j = 0; j < parts.length; j++) {
      const part = parts[j];
      const at = `messages[${i}].content[${j}]`;
      if (!isObject(part)) return `Invalid type for '${at}': expected an object.`;
      const type = String(part['type']);
      if (message['role'] !== 'user' && type !== 'text') {
        return `Invalid value: '${type}'. Supported values are: 'text'.`;
      }
      if (!CHAT_PART_TYPES.includes(type)) {
        return `Invalid value: '${type}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.`;
      }
      if (type === 'text' && typeof part['text'] !== 'string')
        return `Missing required parameter: '${at}.text'.`;
      if (type === 'image_url') {
        const image = part['image_url'];
        if (!isObject(image) || typeof image['url'] !== 'string')
          return `Missing required parameter: '${at}.image_url.url'.`;
        if (/^https?:\/\//.test(image['url'])) continue;
        const parsed = parseDataUrl(image['url']);
        if (
          !parsed ||
          !IMAGE_TYPES.includes(parsed.mimeType) ||
          sniffAttachmentType(parsed.data) !== parsed.mimeType
        ) {
          return `Invalid image URL: '${at}.image_url.url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got a value that is not.`;
        }
      }
    }
  }
  return null;
}

const RESPONSES_PART_TYPES = [
  'input_text',
  'input_image',
  'output_text',
  'refusal',
  'input_file',
  'computer_screenshot',
  'summary_text',
];

/** Responses: message content parts of the known types; `input_image` a data URL, `input_file` a PDF with a name. */
export function validateResponsesMedia(body: Json): string | null {
  const input = Array.isArray(body['input']) ? (body['input'] as unknown[]) : [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    if (!isObject(item) || !Array.isArray(item['content'])) continue;
    const parts = item['content'] as unknown[];
    for (let j = 0; j < parts.length; j++) {
      const part = parts[j];
      const at = `input[${i}].content[${j}]`;
      if (!isObject(part)) return `Invalid type for '${at}': expected an object.`;
      const type = String(part['type']);
      if (!RESPONSES_PART_TYPES.includes(type)) {
        return `Invalid value: '${type}'. Supported values are: ${RESPONSES_PART_TYPES.map((t) => `'${t}'`).join(', ')}.`;
      }
      if (type === 'input_image') {
        const detail = part['detail'];
        if (detail !== undefined && (typeof detail !== 'string' || !['low', 'high', 'auto'].includes(detail)))
          return `Invalid value: '${JSON.stringify(detail)}'. Supported values are: 'low', 'high', and 'auto'.`;
        const parsed = parseDataUrl(part['image_url']);
        if (
          !parsed ||
          !IMAGE_TYPES.includes(parsed.mimeType) ||
          sniffAttachmentType(parsed.data) !== parsed.mimeType
        )
          return `Invalid 'input[${i}].content[${j}].image_url'. Expected a valid URL, but got a value with an invalid format.`;
      }
      if (type === 'input_file') {
        const parsed = parseDataUrl(part['file_data']);
        if (
          !parsed ||
          parsed.mimeType !== 'application/pdf' ||
          sniffAttachmentType(parsed.data) !== 'application/pdf'
        )
          return `Invalid file data: '${at}.file_data'. Expected a base64-encoded data URL with a valid file MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ==').`;
        if (typeof part['filename'] !== 'string' || part['filename'] === '')
          return `Missing required parameter: '${at}.filename'.`;
      }
    }
  }
  return null;
}
