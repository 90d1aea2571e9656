import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allTrajectories } from './suite.js';

const readme = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'README.md'), 'utf8');

describe('the trajectory suite README', () => {
  it('lists every trajectory with what it checks, word for word', () => {
    expect(allTrajectories.length).toBeGreaterThanOrEqual(20);
    expect(new Set(allTrajectories.map((t) => t.id)).size).toBe(allTrajectories.length);
    for (const trajectory of allTrajectories) {
      expect(readme).toContain(
        `| \`${trajectory.id}\` | ${trajectory.style}${trajectory.wire === 'chat' ? ' (chat)' : ''} | ${trajectory.via ?? 'api'} | ${trajectory.checks} |`,
      );
    }
  });
});
