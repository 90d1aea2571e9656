import type { JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { folderName } from '../../lib/format.js';

/** Recently used project folders as one-click choices; missing folders are shown but cannot be picked. */
export function RecentProjects({ onPick }: { onPick: (folder: string) => void }): JSX.Element | null {
  const recent = useQuery(() => call(keel().projects.recent()), []);
  const projects = recent.data?.projects ?? [];
  if (recent.error) return <p className="hint">Recent projects could not be read: {recent.error}</p>;
  if (projects.length === 0) return null;
  return (
    <div className="recent-projects" role="group" aria-label="Recent projects">
      {projects.slice(0, 6).map((project) => (
        <button
          key={project.folder}
          type="button"
          className="chip"
          disabled={!project.exists}
          title={project.exists ? project.folder : `${project.folder} (folder missing)`}
          onClick={() => onPick(project.folder)}
        >
          {folderName(project.folder)}
          {project.exists ? '' : ' (missing)'}
        </button>
      ))}
    </div>
  );
}
