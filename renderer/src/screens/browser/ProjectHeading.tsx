import type { JSX } from 'react';
import { folderName } from '../../lib/format.js';

type Props = {
  id: string;
  folder: string;
  exists: boolean;
  count: number;
  collapsed: boolean;
  active: boolean;
  onToggle: () => void;
};

/** A project folder heading in the browser; says so when the folder is gone (its sessions open read-only). */
export function ProjectHeading({
  id,
  folder,
  exists,
  count,
  collapsed,
  active,
  onToggle,
}: Props): JSX.Element {
  return (
    <div
      id={id}
      role="option"
      aria-selected={active}
      aria-expanded={!collapsed}
      aria-label={`Project ${folderName(folder)}, ${folder}${exists ? '' : ', folder missing'}, ${count} sessions${collapsed ? ', collapsed' : ''}`}
      className={`project-heading${active ? ' is-active' : ''}${exists ? '' : ' is-missing'}`}
      onClick={onToggle}
      title={folder}
    >
      <span className="chevron" aria-hidden="true">
        {collapsed ? '▸' : '▾'}
      </span>
      <span className="project-name">{folderName(folder)}</span>
      {/* The path is shown right-aligned (its end matters); the marks keep its slashes in order. */}
      <span className="project-path">{`\u200e${folder}\u200e`}</span>
      {exists ? null : <span className="tag tag-warning">folder missing</span>}
      <span className="project-count">{count}</span>
    </div>
  );
}
