import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

let project: string;

describe.skipIf(!HAS_CHROMIUM)('what the provider said, in the transcript', () => {
  const app = setUpApp({
    prefix: 'keel-ui-stops-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
    },
  });

  it('shows a refusal as a notice with its explanation, and a reply cut at the output limit as one', async () => {
    const page = await app.goto();
    await createSession(page, { title: 'Stops', projectFolder: project });

    app.provider.enqueue({ kind: 'reply', refusal: "I'm sorry, I can't help with that." });
    await sendMessage(page, 'write something bad');
    const refusal = page.locator('.marker-stop-refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(
      /^The model declined to continue: I'm sorry, I can't help with that\. Rephrase the request/,
    );
    await waitForIdle(page);

    app.provider.enqueue({ kind: 'reply', text: 'The first half of the', stopReason: 'length' });
    await sendMessage(page, 'explain everything');
    const cut = page.locator('.marker-stop-output_limit');
    await cut.waitFor();
    expect(await cut.textContent()).toMatch(/^The reply was cut off at the model's output limit\./);
    await waitForIdle(page);
    await screenshot(page, 'provider-stops');
  });
});
