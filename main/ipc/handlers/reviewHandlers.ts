import {
  decideApproval,
  listGrants,
  pendingApprovals,
  previewApproval,
  readArtifactImage,
  readArtifactPage,
  readSessionBox,
  readTraceSummary,
  revokeGrant,
  sessionCost,
  SessionLog,
  setBudget,
} from '../../core/harness/index.js';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { IpcFailure } from '../errors.js';
import type { ChannelArgs } from '../contract.js';
import type { reviewChannels } from '../contract/reviewChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** The handlers of approvals, grants, traces, command output, artifacts and terminals. */
export function reviewHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof reviewChannels> {
  const { home, env, keyStore, outputFlows, turns, terminals, summaryOf, readLog } = ctx;
  // The core's approval front door; a refusal becomes the channel's error as it is.
  const decide = (args: ChannelArgs<'approvals.decide'>) =>
    turns.appendWhileIdle(args.sessionId, (log) => {
      // A `tool` grant is also the project's rule: later sessions of the project run the tool without asking.
      const result = decideApproval(
        home,
        log,
        {
          requestSeq: args.requestSeq,
          ...(args.decision === 'grant'
            ? { decision: 'grant' as const, scope: args.scope }
            : { decision: 'deny' as const, ...(args.reason ? { reason: args.reason } : {}) }),
        },
        'the app',
        { always: args.decision === 'grant' && args.always === true },
      );
      return {
        events: [result.recorded],
        value: { recorded: result.recorded, stillPending: result.stillPending },
      };
    });

  const revoke = (args: ChannelArgs<'grants.revoke'>) =>
    turns.appendWhileIdle(args.sessionId, (log) => {
      const result = revokeGrant(home, log, args.grantSeq, args.reason, 'the app');
      return { events: [result.recorded], value: { event: result.recorded, grant: result.grant } };
    });

  return {
    'approvals.list': (args) => readLog(args.sessionId, (log) => ({ pending: pendingApprovals(log.read()) })),

    'approvals.decide': async (args) => {
      const { recorded, stillPending } = decide(args);
      if (!args.resume || stillPending) return { event: recorded };
      return { event: recorded, turnId: await turns.start(args.sessionId, {}) };
    },

    'approvals.preview': (args) => {
      const log = SessionLog.open(home, args.sessionId, { write: false });
      const run = async () => {
        const events = log.read();
        const box = await readSessionBox(log, { env, keys: keyStore.read() });
        return previewApproval(events, args.requestSeq, box);
      };
      return run().finally(() => log.close());
    },

    'grants.list': (args) =>
      readLog(args.sessionId, (log) => ({
        grants: listGrants(log.read()).filter((grant) => args.includeRevoked || !grant.revoked),
      })),

    'grants.revoke': (args) => revoke(args),

    'trace.summary': (args) => ({
      summary: readTraceSummary(home, args.sessionId, {
        now: new Date(),
        ...(args.maxDepth !== undefined ? { maxDepth: args.maxDepth } : {}),
      }),
    }),

    'cost.report': (args) => ({ report: sessionCost(home, args.sessionId) }),

    'budget.set': async (args) => {
      if (turns.isRunning(args.sessionId))
        throw new IpcFailure(
          'invalid_state',
          'the session is running a turn: change its caps when the turn ends',
        );
      await setBudget(home, args.sessionId, {
        ...(args.usd === undefined ? {} : { usd: args.usd }),
        ...(args.tokens === undefined ? {} : { tokens: args.tokens }),
      });
      return { report: sessionCost(home, args.sessionId) };
    },

    'commands.kill': (args) => {
      const command = turns.runningCommandOf(args.sessionId, args.toolCallId);
      if (command) {
        command.abort();
        return { killed: true as const };
      }
      return readLog(args.sessionId, (log) => {
        throw whyNotRunning(log.read(), args.toolCallId, turns.isRunning(args.sessionId));
      });
    },

    'artifacts.read': (args) => {
      const artifactsDir = readLog(args.sessionId, (log) => log.artifactsDir);
      return readArtifactPage(artifactsDir, args.handle, args.offset, args.maxBytes);
    },

    'artifacts.image': (args) => {
      // Only a handle a tool result (or a prompt's attached image, issue #32) of this session lists as an
      // image: no other artifact is served so.
      const artifactsDir = readLog(args.sessionId, (log) => {
        const listed = log
          .readKinds(['tool_result', 'user_message'], { validate: false })
          .some((event) =>
            event.kind === 'tool_result'
              ? event.images?.some((i) => i.handle === args.handle)
              : event.kind === 'user_message' &&
                event.attachments?.some((a) => a.handle === args.handle && a.mimeType !== 'application/pdf'),
          );
        if (!listed)
          throw new IpcFailure('not_found', `no image ${JSON.stringify(args.handle)} in this session`);
        return log.artifactsDir;
      });
      return readArtifactImage(artifactsDir, args.handle);
    },

    'tool.watch': (args, caller) => {
      summaryOf(args.sessionId);
      outputFlows.watch(caller.client, args.sessionId);
      return { watching: true as const };
    },

    'tool.unwatch': (args, caller) => {
      outputFlows.unwatch(caller.client, args.sessionId);
      return { watching: false as const };
    },

    'tool.outputAck': (args, caller) => ({
      unackedChars: outputFlows.ack(caller.client, args.sessionId, args.toolCallId, args.chars),
    }),

    'terminal.open': (args, caller) => terminals.openTerminal(caller.client, args.sessionId, args),

    'terminal.write': (args) => {
      terminals.write(args.terminalId, args.data);
      return {};
    },

    'terminal.resize': (args) => {
      terminals.resize(args.terminalId, args.cols, args.rows);
      return {};
    },

    'terminal.ack': (args) => {
      terminals.ack(args.terminalId, args.chars);
      return {};
    },

    'terminal.kill': (args) => terminals.kill(args.terminalId),

    'terminal.list': (args, caller) => ({ terminals: terminals.list(caller.client, args.sessionId) }),
  };
}

function whyNotRunning(events: readonly SessionEvent[], toolCallId: string, turnHere: boolean): IpcFailure {
  let started: EventOf<'tool_call_started'> | undefined;
  let finished = false;
  for (const event of events) {
    if (event.kind === 'tool_call_started' && event.toolCallId === toolCallId) {
      started = event;
      finished = false;
    } else if (event.kind === 'tool_result' && event.toolCallId === toolCallId) finished = true;
  }
  if (!started) return new IpcFailure('not_found', `no call ${toolCallId} was started in this session`);
  if (started.tool !== 'run_command') {
    return new IpcFailure('invalid_state', `call ${toolCallId} is a ${started.tool} call, not a command`);
  }
  if (finished) return new IpcFailure('invalid_state', `command ${toolCallId} has already finished`);
  if (turnHere) {
    return new IpcFailure('invalid_state', `command ${toolCallId} is still starting: try again in a moment`);
  }
  return new IpcFailure(
    'invalid_state',
    `command ${toolCallId} is not running in this Keel process (another process, such as the CLI, runs its turn: stop that turn)`,
  );
}
