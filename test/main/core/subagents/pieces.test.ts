import { describe, expect, it } from 'vitest';
import type { EventOf, SessionEvent } from '../../../../main/common/events.js';
import { findMirrored, forwardedDecision, mirrorRequest } from '../../../../main/core/subagents/approvals.js';
import { composeResult, latestAnswer, truncateUtf8 } from '../../../../main/core/subagents/result.js';
import {
  childPolicy,
  chooseChildTools,
  readSubagentSpec,
  resolveBudget,
} from '../../../../main/core/subagents/spec.js';
import { createToolRegistry } from '../../../../main/tools/registry.js';

const at = '2025-01-01T00:00:00.000Z';

describe('tool registries for parents and children', () => {
  it('adds spawn_subagent only when asked, after the mode’s tools', () => {
    expect(createToolRegistry('read-only').get('spawn_subagent')).toBeUndefined();
    expect(createToolRegistry('write', { subagents: true }).names().at(-1)).toBe('spawn_subagent');
    expect(createToolRegistry('read-only', { subagents: true }).get('spawn_subagent')?.kind).toBe('subagent');
  });

  it('keeps only the named tools of the mode, never a tool of a looser mode', () => {
    expect(createToolRegistry('write', { only: ['write_file', 'grep'] }).names()).toEqual([
      'grep',
      'write_file',
    ]);
    expect(createToolRegistry('read-only', { only: ['grep', 'run_command'] }).names()).toEqual(['grep']);
  });
});

describe('choosing a child’s tools', () => {
  const write = createToolRegistry('write', { subagents: true });
  const readOnly = createToolRegistry('read-only', { subagents: true });

  it('defaults to the parent’s read tools', () => {
    expect(chooseChildTools(write, undefined)).toEqual({
      ok: true,
      tools: ['read_file', 'list_dir', 'glob', 'grep', 'todo', 'web_fetch'],
      mode: 'read-only',
    });
  });

  it('keeps the parent’s order, drops repeats, and needs write mode for a write tool', () => {
    expect(chooseChildTools(write, ['edit_file', 'grep', 'grep'])).toEqual({
      ok: true,
      tools: ['grep', 'edit_file'],
      mode: 'write',
    });
  });

  it('refuses a tool the parent lacks, naming it and the parent’s tools', () => {
    const chosen = chooseChildTools(readOnly, ['grep', 'write_file', 'made_up']);
    expect(chosen.ok).toBe(false);
    if (!chosen.ok) {
      expect(chosen.error).toContain('you do not have "write_file", "made_up"');
      expect(chosen.error).toContain('(your tools: read_file, list_dir, glob, grep, todo, web_fetch)');
    }
  });

  it('refuses spawn_subagent', () => {
    expect(chooseChildTools(write, ['spawn_subagent']).ok).toBe(false);
  });

  it('gives a read-only child the read-only policy and a writing child the parent’s', () => {
    expect(childPolicy('full-auto', 'read-only')).toBe('read-only');
    expect(childPolicy('auto-edit', 'write')).toBe('auto-edit');
  });

  it('fills budget defaults and keeps what the call named', () => {
    expect(resolveBudget({ maxTurns: 3 })).toEqual({ maxTurns: 3, maxTokens: 500_000, wallTimeMs: 600_000 });
  });
});

describe('the child spec in session_created', () => {
  const created = (metadata?: Record<string, unknown>): EventOf<'session_created'> => ({
    seq: 1,
    at,
    kind: 'session_created',
    sessionId: 'child',
    projectFolder: '/p',
    provider: 'openai',
    model: 'm',
    contextWindow: 1000,
    toolMode: 'read-only',
    policy: 'read-only',
    ...(metadata ? { metadata } : {}),
  });

  it('is absent for a top-level session', () => {
    expect(readSubagentSpec(created())).toBeUndefined();
  });

  it('refuses to run a child whose spec is malformed rather than give it every tool', () => {
    expect(() => readSubagentSpec(created({ subagent: { tools: 'grep' } }))).toThrow(
      /session child is a subagent whose metadata is invalid/,
    );
  });
});

describe('the answer that enters the parent', () => {
  it('cuts UTF-8 at a character boundary', () => {
    expect(truncateUtf8('aé', 2)).toEqual({ text: 'a', truncated: true });
    expect(truncateUtf8('aé', 3)).toEqual({ text: 'aé', truncated: false });
    expect(truncateUtf8('😀😀', 5)).toEqual({ text: '😀', truncated: true });
  });

  it('says when the child ran out of budget or was interrupted, and always names the child', () => {
    const budget = composeResult({
      childId: 'c1',
      answer: 'half',
      ending: { kind: 'out_of_budget', reason: 'out of budget: x' },
      maxBytes: 100,
    });
    expect(budget.content).toBe(
      '[subagent out of budget: x; this is what it had when it stopped]\nhalf\n(child session c1; keel show c1)',
    );
    const empty = composeResult({
      childId: 'c2',
      answer: undefined,
      ending: { kind: 'completed' },
      maxBytes: 100,
    });
    expect(empty.content).toBe('(the subagent gave no answer)\n(child session c2; keel show c2)');
  });

  it('takes the newest text of the current task: an answer or an interruption’s partial text', () => {
    const events = [
      { seq: 2, at, kind: 'user_message', content: 'task' },
      { seq: 3, at, kind: 'assistant_message', content: 'looking', toolCalls: [] },
      { seq: 4, at, kind: 'assistant_message', content: ' ', toolCalls: [] },
      { seq: 5, at, kind: 'interrupted', content: 'half an answer', toolCalls: [] },
    ] as SessionEvent[];
    expect(latestAnswer(events)).toBe('half an answer');
    expect(latestAnswer(events.slice(0, 1))).toBeUndefined();
  });
});

describe('mirrored approvals', () => {
  const request: EventOf<'approval_request'> = {
    seq: 7,
    at,
    kind: 'approval_request',
    toolCallId: 'w1',
    tool: 'run_command',
    arguments: '{"command":"npm test"}',
    reason: 'commands need approval in this policy',
  };

  it('carries the child’s tool, arguments and reason under the parent’s call id', () => {
    expect(mirrorRequest('kid', 'spawn1', request)).toEqual({
      kind: 'approval_request',
      toolCallId: 'spawn1',
      tool: 'run_command',
      arguments: '{"command":"npm test"}',
      reason: 'subagent kid asks (its request 7): commands need approval in this policy',
    });
  });

  it('finds the child request a mirror stands for, and nothing for a different one', () => {
    const mirror = { ...mirrorRequest('kid', 'spawn1', request), seq: 12, at } as EventOf<'approval_request'>;
    expect(findMirrored([request], mirror)).toBe(request);
    expect(findMirrored([{ ...request, arguments: '{"command":"rm -rf /"}' }], mirror)).toBeUndefined();
  });

  it('forwards the scope of a grant and the reason of a denial', () => {
    expect(
      forwardedDecision(
        { seq: 13, at, kind: 'approval_granted', requestSeq: 12, scope: 'prefix:npm test' },
        7,
      ),
    ).toEqual({ kind: 'approval_granted', requestSeq: 7, scope: 'prefix:npm test' });
    expect(
      forwardedDecision({ seq: 13, at, kind: 'approval_denied', requestSeq: 12, reason: 'no' }, 7),
    ).toEqual({ kind: 'approval_denied', requestSeq: 7, reason: 'no' });
  });
});
