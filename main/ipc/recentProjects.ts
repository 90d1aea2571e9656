import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** `<home>/recent-projects.json`: the project folders used most recently, newest first. */
const RECENT_FILE = 'recent-projects.json';

/** How many folders the list keeps. */
export const RECENT_LIMIT = 20;

const RecentProjects = z.array(z.object({ folder: z.string().min(1), lastUsedAt: z.string() }));

/** One remembered project folder. */
export type RecentProject = z.infer<typeof RecentProjects>[number];

/** The remembered folders, newest first; a missing or unreadable file is an empty list (it is only a convenience). */
export function readRecentProjects(home: string): RecentProject[] {
  try {
    const parsed = RecentProjects.safeParse(
      JSON.parse(fs.readFileSync(path.join(home, RECENT_FILE), 'utf8')),
    );
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

/** Moves `folder` to the front of the list (written atomically), keeping at most RECENT_LIMIT; returns the new list. */
export function rememberProject(home: string, folder: string, now = new Date()): RecentProject[] {
  const list = [
    { folder, lastUsedAt: now.toISOString() },
    ...readRecentProjects(home).filter((entry) => entry.folder !== folder),
  ].slice(0, RECENT_LIMIT);
  fs.mkdirSync(home, { recursive: true });
  const file = path.join(home, RECENT_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(list, null, 2)}\n`);
  fs.renameSync(temp, file);
  return list;
}
