import fs from 'node:fs';
import { importHistory, type HistoryImportReport } from '../../core/harness/index.js';
import type { importChannels } from '../contract/importChannels.js';
import { IpcFailure } from '../errors.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** The report as the contract has it: reasons counted, the first problems as `file:line: why`. */
function reportView(report: HistoryImportReport) {
  const reasons = new Map<string, number>();
  for (const skip of report.skipped) reasons.set(skip.reason, (reasons.get(skip.reason) ?? 0) + 1);
  return {
    tool: report.tool,
    root: report.root,
    found: report.found,
    projects: report.projects,
    imported: report.imported.map((s) => ({
      sessionId: s.sessionId,
      ...(s.project !== undefined ? { project: s.project } : {}),
      status: s.status,
      messages: s.messages,
    })),
    skipped: [...reasons].map(([reason, count]) => ({ reason, count })),
    problems: report.problems.slice(0, 20).map((p) => `${p.file}:${p.line}: ${p.message}`),
    problemCount: report.problems.length + report.moreProblems,
  };
}

/** Issue 35's handlers: thin adapters over harness/historyImport.ts, as `keel import --from` is. */
export function importHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof importChannels> {
  const { home, env, hub } = ctx;
  return {
    'imports.scan': async (args) =>
      reportView(await importHistory(home, { tool: args.tool, env, dryRun: true })),
    'imports.run': async (args) => {
      let project: string;
      try {
        project = fs.realpathSync(args.project);
        if (!fs.statSync(project).isDirectory()) throw new Error('not a folder');
      } catch {
        throw new IpcFailure('invalid_input', `the project folder ${args.project} does not exist here`);
      }
      const report = await importHistory(home, {
        tool: args.tool,
        env,
        project,
        onProgress: ({ done, total }) => hub.publish('imports.progress', { tool: args.tool, done, total }),
      });
      for (const session of report.imported) {
        hub.publish('sessions.changed', {
          sessionId: session.sessionId,
          change: session.status === 'new' ? 'created' : 'updated',
        });
      }
      return reportView(report);
    },
  };
}
