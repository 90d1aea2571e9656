import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { EventOf, SessionEvent } from '../../common/events.js';
import { SessionLog } from '../log/sessionLog.js';
import type { SessionStatus } from '../../store/sessionIndex.js';
import type {
  HarnessPendingApproval,
  HarnessSessionState,
  HarnessSessionStatus,
  HarnessUsage,
} from './types.js';

/** Fields the log decides; a host patch of them only stands until the next event. */
const DERIVED = ['state', 'turn', 'lastSeq', 'pendingApprovals', 'usage', 'updatedAt'] as const;

const StoredPatch = z.object({
  patch: z.record(z.string(), z.unknown()),
  /** The log's last seq when the patch was written. */
  atSeq: z.number().int().nonnegative(),
  at: z.string(),
});
type StoredPatch = z.infer<typeof StoredPatch>;

const STATUS_FILE = 'status.json';

/**
 * A session's status folded from its log, incrementally: each `read` applies only the events appended
 * since the previous one, so polling a long session costs the new events, not the whole log.
 */
export class StatusFold {
  private lastSeq = 0;
  private lastAt = '';
  private lastKind: SessionEvent['kind'] | undefined;
  private turns = 0;
  private readonly usage: HarnessUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  private readonly pending = new Map<number, EventOf<'approval_request'>>();

  constructor(
    private readonly home: string,
    private readonly id: string,
    private readonly dataDir: string,
    /** The index's status of the session (it knows whether a live process runs a turn). */
    private readonly indexStatus: () => SessionStatus | undefined,
  ) {}

  /**
   * Status now: the log (read-only, no lease; or `open`, a log the caller holds) and the index's running
   * flag, then the host's persisted patch.
   */
  read(open?: SessionLog): HarnessSessionStatus {
    const log = open ?? SessionLog.open(this.home, this.id, { write: false });
    let indexStatus: SessionStatus | undefined;
    try {
      // Stored events were validated when appended: folding needs their fields, not a second check.
      for (const event of log.read({ fromSeq: this.lastSeq + 1, validate: false })) this.apply(event);
      indexStatus = this.indexStatus();
    } finally {
      if (!open) log.close();
    }
    const derived: HarnessSessionStatus = {
      state: this.state(indexStatus),
      turn: this.turns,
      lastSeq: this.lastSeq,
      pendingApprovals: [...this.pending.values()].map(toPending),
      usage: { ...this.usage },
      updatedAt: this.lastAt,
    };
    return overlay(derived, readPatch(this.dataDir), indexStatus);
  }

  private state(indexStatus: SessionStatus | undefined): HarnessSessionState {
    if (this.pending.size > 0) return 'awaiting_approval';
    if (this.lastKind === 'interrupted') return 'interrupted';
    if (this.lastKind === 'error') return 'error';
    if (indexStatus === 'running') return 'running';
    // The index reports a turn whose process died mid-run as interrupted.
    if (indexStatus === 'interrupted') return 'interrupted';
    return 'idle';
  }

  private apply(event: SessionEvent): void {
    this.lastSeq = event.seq;
    this.lastAt = event.at;
    this.lastKind = event.kind;
    switch (event.kind) {
      case 'user_message':
        this.turns++;
        break;
      case 'assistant_message':
        if (event.usage) {
          this.usage.inputTokens += event.usage.inputTokens;
          this.usage.outputTokens += event.usage.outputTokens;
          this.usage.cacheReadTokens += event.usage.cacheReadTokens ?? 0;
          this.usage.cacheWriteTokens += event.usage.cacheWriteTokens ?? 0;
        }
        break;
      case 'approval_request':
        this.pending.set(event.seq, event);
        break;
      case 'approval_granted':
      case 'approval_denied':
      case 'plan_approved':
      case 'plan_rejected':
        this.pending.delete(event.requestSeq);
        break;
      default:
        break;
    }
  }
}

function toPending(event: EventOf<'approval_request'>): HarnessPendingApproval {
  return {
    seq: event.seq,
    toolCallId: event.toolCallId,
    tool: event.tool,
    arguments: event.arguments,
    ...(event.reason ? { reason: event.reason } : {}),
  };
}

/**
 * Host patch over the derived status: host-only fields always; derived fields only while no event came
 * after the patch (the log wins afterwards), and a patched `running` only while the index agrees a turn runs.
 */
function overlay(
  derived: HarnessSessionStatus,
  stored: StoredPatch | undefined,
  indexStatus: SessionStatus | undefined,
): HarnessSessionStatus {
  if (!stored) return derived;
  const result: HarnessSessionStatus = { ...derived };
  const fresh = stored.atSeq === derived.lastSeq;
  for (const [key, value] of Object.entries(stored.patch)) {
    const isDerived = (DERIVED as readonly string[]).includes(key);
    if (!isDerived) result[key] = value;
    else if (fresh && key !== 'lastSeq' && key !== 'updatedAt') {
      if (key === 'state' && value === 'running' && indexStatus !== 'running') continue;
      result[key] = value;
    }
  }
  if (stored.at > result.updatedAt) result.updatedAt = stored.at;
  return result;
}

function readPatch(dataDir: string): StoredPatch | undefined {
  try {
    const parsed = StoredPatch.safeParse(
      JSON.parse(fs.readFileSync(path.join(dataDir, STATUS_FILE), 'utf8')),
    );
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Persists a host patch (merged over the previous one) atomically, stamped with the log's current last seq. */
export function writeStatusPatch(dataDir: string, patch: Record<string, unknown>, lastSeq: number): void {
  const previous = readPatch(dataDir);
  const stored: StoredPatch = {
    patch: { ...(previous?.patch ?? {}), ...patch },
    atSeq: lastSeq,
    at: new Date().toISOString(),
  };
  const file = path.join(dataDir, STATUS_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(stored));
  fs.renameSync(temp, file);
}
