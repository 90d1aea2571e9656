import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ServedModelList } from '../common/models.js';

/*
 * `<home>/served-models.json`: the cache of each provider's models endpoint, one list per provider and base
 * URL. It is a cache: the endpoint is the truth, and a file that cannot be read is replaced by the next read.
 */

const CacheFile = z.object({ version: z.literal(1), lists: z.array(ServedModelList) }).strict();

const fileOf = (home: string) => path.join(home, 'served-models.json');
const sameEndpoint = (list: ServedModelList, provider: string, baseUrl: string | undefined) =>
  list.provider === provider && (list.baseUrl ?? '') === (baseUrl ?? '');

/** Every cached list; an absent or unreadable file reads as none (the next refresh rewrites it). */
export function readServedModelLists(home: string): ServedModelList[] {
  let text: string;
  try {
    text = fs.readFileSync(fileOf(home), 'utf8');
  } catch {
    return [];
  }
  try {
    const parsed = CacheFile.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.lists : [];
  } catch {
    return [];
  }
}

/** The cached list of one provider endpoint, when there is one. */
export function readServedModelList(
  home: string,
  provider: string,
  baseUrl: string | undefined,
): ServedModelList | undefined {
  return readServedModelLists(home).find((list) => sameEndpoint(list, provider, baseUrl));
}

/**
 * Replaces the cached list of `list`'s endpoint, atomically (temp file + rename). A home that does not exist
 * yet is not made for a cache (a refused `keel run` leaves nothing behind): returns false then.
 */
export function writeServedModelList(home: string, list: ServedModelList): boolean {
  const valid = ServedModelList.parse(list);
  if (!fs.existsSync(home)) return false;
  const lists = readServedModelLists(home).filter(
    (entry) => !sameEndpoint(entry, valid.provider, valid.baseUrl),
  );
  lists.push(valid);
  const file = fileOf(home);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    fs.writeFileSync(temp, `${JSON.stringify({ version: 1, lists }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temp, file);
  } catch (error) {
    // A full disk leaves a torn temp file: it goes, the old list stays.
    fs.rmSync(temp, { force: true });
    throw error;
  }
  return true;
}
