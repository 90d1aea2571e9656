/** What a registered language says about the files it covers (Monaco's ILanguageExtensionPoint, the parts used). */
export type LanguageEntry = { id: string; extensions?: string[]; filenames?: string[] };

/**
 * The language id for a file path: an exact file name match first (Dockerfile, Gemfile), else the longest
 * registered extension the name ends with (`.d.ts` before `.ts`), compared case-insensitively; `plaintext`
 * when nothing matches. Pure.
 */
export function languageForPath(filePath: string, languages: readonly LanguageEntry[]): string {
  const name = (filePath.split(/[\\/]/).pop() ?? '').toLowerCase();
  if (name === '') return 'plaintext';
  for (const language of languages) {
    if (language.filenames?.some((candidate) => candidate.toLowerCase() === name)) return language.id;
  }
  let best: { id: string; length: number } | undefined;
  for (const language of languages) {
    for (const extension of language.extensions ?? []) {
      const wanted = extension.toLowerCase();
      if (name.endsWith(wanted) && wanted.length > (best?.length ?? 0)) {
        best = { id: language.id, length: wanted.length };
      }
    }
  }
  return best?.id ?? 'plaintext';
}
