import type { SessionEvent } from '../../common/events.js';
import type { Payload, ProjectionView } from '../../common/payload.js';
import { ProjectionFold } from './fold.js';
import type { ProjectOptions } from './format.js';
import { selectView, type SelectViewOptions } from './view.js';

export * from './format.js';
export * from './view.js';
export { ProjectionFold, type ProjectionFoldState } from './fold.js';

/**
 * Projects a view to a provider payload in O(view.tail): it reads nothing but the view (one pass of a
 * ProjectionFold, fold.ts, which a host keeps to extend event by event instead).
 * Guarantees validatePayload(result).ok, and prefix stability under appends (see README.md).
 */
export function projectView(view: ProjectionView, options: ProjectOptions): Payload {
  return ProjectionFold.fromView(view).payload(options);
}

/** Projects a full event list: projectView(selectView(events, options), options). O(all events). */
export function projectPayload(
  events: readonly SessionEvent[],
  options: ProjectOptions & SelectViewOptions,
): Payload {
  const selectOptions: SelectViewOptions = {};
  if (options.withoutCompaction !== undefined) selectOptions.withoutCompaction = options.withoutCompaction;
  return projectView(selectView(events, selectOptions), { system: options.system });
}
