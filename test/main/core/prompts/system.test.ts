import { describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_PROMPT, PATHS_SECTION } from '../../../../main/core/prompts/system.js';
import { createToolRegistry } from '../../../../main/tools/registry.js';

describe('the default system prompt', () => {
  it('says how to use every tool Keel can give the model', () => {
    const names = createToolRegistry('write', { subagents: true }).names();
    expect(names.length).toBeGreaterThanOrEqual(8);
    const tools = DEFAULT_SYSTEM_PROMPT.slice(DEFAULT_SYSTEM_PROMPT.indexOf('# Tools'));
    for (const name of names) expect(tools).toMatch(new RegExp(`^- (\\w+ and )?${name}( and \\w+)?:`, 'm'));
  });

  it('covers working, approvals, denials, git, the sandbox, instructions and the environment block', () => {
    const headings = DEFAULT_SYSTEM_PROMPT.split('\n').filter((line) => line.startsWith('# '));
    expect(headings).toEqual([
      '# Paths',
      '# How to work',
      '# Tools',
      '# Approvals',
      '# Git',
      '# The sandbox',
      '# What else you are told',
      '# Communication',
    ]);
    expect(DEFAULT_SYSTEM_PROMPT).toContain('Never commit, push');
    expect(DEFAULT_SYSTEM_PROMPT).toContain('When the user denies a call');
    expect(DEFAULT_SYSTEM_PROMPT).toContain('.git, .keel, .vscode, .idea, .husky, .envrc');
    expect(DEFAULT_SYSTEM_PROMPT).toContain('AGENTS.md');
    expect(DEFAULT_SYSTEM_PROMPT).toContain('<environment> block');
    expect(DEFAULT_SYSTEM_PROMPT).toContain(PATHS_SECTION);
  });

  it('holds nothing volatile: no date, time, number that counts, id or host path', () => {
    expect(DEFAULT_SYSTEM_PROMPT).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(DEFAULT_SYSTEM_PROMPT).not.toMatch(/\d{1,2}:\d{2}/);
    expect(DEFAULT_SYSTEM_PROMPT).not.toMatch(/\d{3,}/);
    expect(DEFAULT_SYSTEM_PROMPT).not.toMatch(/\/(home|Users|tmp|var|root)\//);
    expect(DEFAULT_SYSTEM_PROMPT).not.toMatch(/[0-9a-f]{12,}/i);
    // Fixed text, and short enough to pay for itself on every request.
    expect(DEFAULT_SYSTEM_PROMPT.trim()).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(DEFAULT_SYSTEM_PROMPT.length).toBeLessThan(12_000);
  });

  it('describes paths relative to the project root in one section', () => {
    expect(PATHS_SECTION.startsWith('# Paths\n')).toBe(true);
    expect(PATHS_SECTION).toContain('relative to the project root');
    expect(DEFAULT_SYSTEM_PROMPT.split('relative to the project root')).toHaveLength(2);
  });
});
