// Redaction of a file Keel wrote itself (an artifact such as a commit's patch), streamed so memory stays
// bounded by the redactor's hold whatever the file's size.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createRedactor, type Redactor } from './redact.js';

/** Lines of .env content a patch may carry, at most (old values on `-` lines, new ones on `+`). */
const MAX_PATCH_ENV_BYTES = 1024 * 1024;

/**
 * Rewrites `file` with every secret replaced, through a temporary file beside it and a rename, so a
 * reader sees the old or the redacted text, never a part. A missing file is left missing.
 */
export async function redactFileInPlace(file: string, redactor: Redactor): Promise<void> {
  if (!fs.existsSync(file)) return;
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.redacting`);
  const stream = redactor.stream();
  async function* redacted(source: AsyncIterable<Buffer>): AsyncGenerator<string> {
    for await (const chunk of source) yield stream.push(chunk);
    yield stream.end();
  }
  try {
    await pipeline(fs.createReadStream(file), redacted, fs.createWriteStream(temp, { mode: 0o600 }));
    fs.renameSync(temp, file);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** The `+`/`-` lines of the `.env*` files a git patch changes, as dotenv text (bounded). */
export async function patchEnvText(file: string): Promise<string> {
  if (!fs.existsSync(file)) return '';
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let inEnv = false;
  let text = '';
  for await (const line of lines) {
    if (line.startsWith('diff --git ')) {
      inEnv = /(?:^|\/)\.env[^/]*$/.test(line.slice(line.lastIndexOf(' b/') + 3));
      continue;
    }
    if (!inEnv || line.startsWith('+++') || line.startsWith('---')) continue;
    if ((line.startsWith('+') || line.startsWith('-')) && text.length < MAX_PATCH_ENV_BYTES)
      text += `${line.slice(1)}\n`;
  }
  return text;
}

/**
 * Redacts a commit's patch: the .env* values the patch itself changes (both sides), those of the folder
 * it was made from, and the secret-looking variables of the environment, plus every known format.
 */
export async function redactPatchFile(file: string, folder: string): Promise<void> {
  const envText = await patchEnvText(file);
  await redactFileInPlace(file, createRedactor({ workspaceRoot: folder, envTexts: [envText] }));
}
