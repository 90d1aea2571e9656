// Attack corpus: credential formats come from a maintained rule set (secretlint's recommended preset,
// pinned), not only from Keel's own list (issue 15). Fake tokens are assembled at run time.
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../main/sandbox/redact.js';
import { RULE_IDS } from '../../main/sandbox/redactRules.js';

const redactor = createRedactor({ env: {} });
const alnum = (length: number, seed = 7) =>
  Array.from({ length }, (_, i) => 'aZ3kQ9mW2xR7pL5tB8nC4vD6'[(i * seed) % 24]).join('');

// Formats Keel's own DETECTORS never had: each is found only through the rule set.
const FORMATS: Record<string, string> = {
  'GitLab personal access token': 'glpat' + '-' + alnum(20),
  'SendGrid API key': 'SG' + '.' + alnum(22) + '.' + alnum(43, 5),
  'Shopify access token': 'shpat' + '_' + alnum(32),
  'Docker personal access token': 'dckr' + '_pat_' + alnum(27),
  'Linear API key': 'lin' + '_api_' + alnum(40),
  'Groq API key': 'gsk' + '_' + alnum(52),
  'Databricks token': 'dapi' + 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6',
  'Figma token': 'figd' + '_' + alnum(43),
  'Notion integration token': 'ntn' + '_' + '12345678901' + alnum(35),
  'HashiCorp Vault token': 'hvs' + '.' + alnum(95),
};

describe('formats from the rule set', () => {
  it('runs the pinned preset (without the comment filter)', () => {
    expect(RULE_IDS.length).toBeGreaterThan(15);
    expect(RULE_IDS).not.toContain('@secretlint/secretlint-rule-filter-comments');
  });

  for (const [name, token] of Object.entries(FORMATS)) {
    it(`${name}: redacted whole and streamed one character at a time`, () => {
      const text = `deploy with ${token} now\n`;
      const out = redactor.redact(text);
      expect(out).not.toContain(token);
      expect(out).toMatch(/^deploy with \[REDACTED:[A-Za-z0-9_.-]+\] now\n$/);
      const stream = redactor.stream();
      let streamed = '';
      for (const char of text) streamed += stream.push(char);
      expect(streamed + stream.end()).toBe(out);
    });
  }

  it('a secretlint-disable comment in output does not switch redaction off', () => {
    const token = FORMATS['GitLab personal access token'] as string;
    const text = `// secretlint-disable\n${token}\n// secretlint-disable-next-line\n${token}\n`;
    expect(redactor.redact(text)).not.toContain(token);
  });

  it('keeps the context Keel names better: a database URL keeps its host, a config line its name', () => {
    const password = 'S3cr3t' + 'Passw0rd';
    expect(redactor.redact(`postgres://app:${password}@db.internal:5432/main`)).toBe(
      'postgres://app:[REDACTED:url-password]@db.internal:5432/main',
    );
  });
});
