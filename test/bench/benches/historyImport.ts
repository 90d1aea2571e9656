import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { importHistory } from '../../../main/core/harness/historyImport.js';
import { makeMetric, round } from '../harness.js';
import { SIZE_PROFILES, type Sizes } from '../sizes.js';
import type { Bench } from './context.js';

/** Workload per size profile (kept here: the runner's sizes.ts is shared by every bench). */
const IMPORT_SIZES = {
  full: { sessions: 1_000, messagesPerSession: 1_000 },
  quick: { sessions: 100, messagesPerSession: 1_000 },
  tiny: { sessions: 10, messagesPerSession: 50 },
};

/** Issue 35's targets: 1,000 sessions with 1M messages imported in under a minute, memory flat in sessions. */
export const IMPORT_TARGET_MS = 60_000;
/** The same target as a rate, for the smaller sizes: 1M messages a minute. */
export const IMPORT_TARGET_PER_SECOND = Math.ceil(1_000_000 / (IMPORT_TARGET_MS / 1000));

/** The 1-minute load average, rounded: these machines are shared, a time means little without it. */
const loadNow = (): number => round(os.loadavg()[0] ?? 0, 1);

function profileOf(sizes: Sizes) {
  if (sizes === SIZE_PROFILES.tiny) return IMPORT_SIZES.tiny;
  if (sizes === SIZE_PROFILES.quick) return IMPORT_SIZES.quick;
  return IMPORT_SIZES.full;
}

/**
 * One Claude Code 1.0-shaped session file of `messages` user and assistant records: prompts, answers, and every
 * fifth answer a Bash call whose result comes in the next user record (written line by line, never whole).
 */
export function writeSession(file: string, project: string, index: number, messages: number): void {
  const sessionId = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const fd = fs.openSync(file, 'w');
  let parent: string | null = null;
  let chunk = '';
  let pendingCall: string | undefined;
  for (let n = 0; n < messages; n++) {
    const uuid = `${sessionId.slice(0, 24)}${String(n).padStart(12, '0')}`;
    const timestamp = new Date(Date.UTC(2025, 5, 1) + index * 3_600_000 + n * 1_000).toISOString();
    const base = {
      parentUuid: parent,
      isSidechain: false,
      userType: 'external',
      cwd: project,
      sessionId,
      version: '1.0.51',
      uuid,
      timestamp,
    };
    let record: Record<string, unknown>;
    if (n % 2 === 0) {
      const content = pendingCall
        ? [{ type: 'tool_result', tool_use_id: pendingCall, content: `src/a${n}.ts\nsrc/b${n}.ts\n` }]
        : `Step ${n}: please look at module ${n % 97} and tell me what it does.`;
      pendingCall = undefined;
      record = { ...base, type: 'user', message: { role: 'user', content } };
    } else {
      const call = n % 10 === 9 ? `toolu_${index}_${n}` : undefined;
      const content: unknown[] = [
        { type: 'text', text: `Module ${n % 97} parses the configuration and returns a map.` },
      ];
      if (call) content.push({ type: 'tool_use', id: call, name: 'Bash', input: { command: `ls src/${n}` } });
      pendingCall = call;
      record = {
        ...base,
        type: 'assistant',
        message: {
          id: `msg_${index}_${n}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content,
          stop_reason: call ? 'tool_use' : 'end_turn',
          usage: { input_tokens: 100, output_tokens: 20 },
        },
        requestId: `req_${index}_${n}`,
      };
    }
    parent = uuid;
    chunk += `${JSON.stringify(record)}\n`;
    if (chunk.length > 256 * 1024) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/**
 * `keel import --from claude-code` of a generated history (issue 35): time, and resident memory sampled while
 * it runs (its peak above the start, and its growth between a tenth of the sessions and all of them: flat in
 * the number of sessions means the second stays near zero). The fixture is generated here, in the scratch dir.
 */
export const historyImportBench: Bench = {
  name: 'import',
  title: 'Import history: Claude Code sessions into Keel (time, peak memory)',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const profile = profileOf(sizes);
    const dir = scratch.dir('import');
    const project = join(dir, 'project');
    const folder = join(dir, 'claude', 'projects', '-bench-project');
    fs.mkdirSync(project, { recursive: true });
    fs.mkdirSync(folder, { recursive: true });
    progress(`import: writing ${profile.sessions} sessions of ${profile.messagesPerSession} messages`);
    for (let i = 0; i < profile.sessions; i++) {
      writeSession(
        join(folder, `s${String(i).padStart(5, '0')}.jsonl`),
        project,
        i,
        profile.messagesPerSession,
      );
    }
    const home = join(dir, 'home');
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    let atTenth: number | undefined;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const loadStart = loadNow();
    const t0 = performance.now();
    const report = await importHistory(home, {
      tool: 'claude-code',
      env: { CLAUDE_CONFIG_DIR: join(dir, 'claude') },
      onProgress: ({ done, total }) => {
        peak = Math.max(peak, process.memoryUsage().rss);
        if (done === Math.ceil(total / 10)) atTenth = peak;
        if (done % 50 === 0) progress(`import: ${done}/${total} sessions`);
      },
    });
    const ms = performance.now() - t0;
    const loadEnd = loadNow();
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const messages = report.imported.reduce((sum, s) => sum + s.messages, 0);
    if (report.imported.length !== profile.sessions) {
      throw new Error(
        `imported ${report.imported.length} of ${profile.sessions} sessions: ${JSON.stringify(report.skipped.slice(0, 3))}`,
      );
    }
    progress('import: again (nothing new)');
    const t1 = performance.now();
    const again = await importHistory(home, {
      tool: 'claude-code',
      env: { CLAUDE_CONFIG_DIR: join(dir, 'claude') },
    });
    const againMs = performance.now() - t1;
    if (again.imported.length !== 0)
      throw new Error(`a second import imported ${again.imported.length} sessions`);
    const mb = (bytes: number) => round(bytes / (1024 * 1024), 1);
    const growth = atTenth === undefined ? 0 : peak - atTenth;
    scratch.remove(dir);
    return {
      name: 'import',
      title: historyImportBench.title,
      params: { ...profile, messages, loadStart, loadEnd, cores: os.cpus().length },
      metrics: [
        makeMetric(`import of ${profile.sessions} sessions, ${messages} messages`, 'ms', 'lower', {
          keel: round(ms, 0),
        }),
        makeMetric('messages per second', 'msg/s', 'higher', { keel: messagesPerSecond(messages, ms) }),
        makeMetric('peak resident memory above the start', 'MB', 'lower', { keel: mb(peak - baseline) }),
        makeMetric('peak growth from a tenth of the sessions to all of them', 'MB', 'lower', {
          keel: mb(growth),
        }),
        makeMetric('the same import again (nothing new)', 'ms', 'lower', { keel: round(againMs, 2) }),
      ],
      notes: [
        `import < ${IMPORT_TARGET_MS / 1000} s per 1M messages: ${messagesPerSecond(messages, ms) >= IMPORT_TARGET_PER_SECOND ? 'PASS' : 'FAIL'} (${round(ms / 1000, 1)} s for ${messages} messages in ${profile.sessions} sessions, at load ${loadStart} → ${loadEnd} on ${os.cpus().length} cores)`,
        `memory flat in the number of sessions: peak ${mb(peak - baseline)} MB above the start, ${mb(growth)} MB of it after the first tenth`,
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 0),
    };
  },
};

function messagesPerSecond(messages: number, ms: number): number {
  return round(messages / (ms / 1000), 0);
}
