import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/ipc/contract.js';
import { createSession, readEvents, sendMessage, setUpApp, waitForIdle } from './appFixture.js';
import { HAS_CHROMIUM, screenshot } from './harness.js';

// Issue #32: files in the composer by paste, drop and the file picker, in Chromium against keel serve; the
// events are real ClipboardEvent / DragEvent objects carrying a DataTransfer with File objects, as a paste
// of a screenshot or a drop from the file manager makes them.

const FIXTURES = path.resolve('test/fixtures/attachments');
const base64Of = (name: string) => fs.readFileSync(path.join(FIXTURES, name)).toString('base64');

let project: string;

/** Dispatches a paste (on the textarea) or a drop (on the composer) of one file made from `data` in the page. */
async function deliver(page: Page, how: 'paste' | 'drop', name: string, type: string, data: string) {
  // A string, like the other browser tests' scripts: the test's tsconfig has no DOM types.
  await page.evaluate(`(() => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(data)}), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], ${JSON.stringify(name)}, { type: ${JSON.stringify(type)} }));
    const init = { bubbles: true, cancelable: true };
    if (${JSON.stringify(how)} === 'paste') {
      document.querySelector('#composer-input').dispatchEvent(new ClipboardEvent('paste', { ...init, clipboardData: transfer }));
    } else {
      const composer = document.querySelector('form.composer');
      composer.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: transfer }));
      composer.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: transfer }));
    }
  })()`);
}

describe.skipIf(!HAS_CHROMIUM)('attachments in the composer', () => {
  const app = setUpApp({
    prefix: 'keel-ui-attach-',
    prepare: ({ dir }) => {
      project = path.join(dir, 'project');
      fs.mkdirSync(project, { recursive: true });
      fs.writeFileSync(path.join(project, 'README.md'), 'hi\n');
    },
  });

  it('takes a pasted, a dropped and a picked file, attaches an SVG as a text file only, and sends them with the prompt', async () => {
    const watched = app.watch('attachments');
    const page = await app.goto();
    const id = await createSession(page, {
      title: 'Screenshot',
      projectFolder: project,
      model: 'llava-scripted',
      contextWindow: 32_000,
    });

    await deliver(page, 'paste', 'image.png', 'image/png', base64Of('red.png'));
    await deliver(page, 'drop', 'photo.jpg', 'image/jpeg', base64Of('photo.jpg'));
    await page.getByLabel('Attach files').setInputFiles(path.join(FIXTURES, 'note.pdf'));
    const chips = page.getByTestId('attachment-chip');
    await expect.poll(() => chips.count()).toBe(3);
    expect(await chips.allInnerTexts()).toEqual([
      expect.stringContaining('image.png'),
      expect.stringContaining('photo.jpg'),
      expect.stringContaining('note.pdf'),
    ]);
    // A text paste stays text.
    await page.getByLabel('Message').fill('what is wrong on this page?');

    // An SVG is never taken as an image (judged by its bytes, whatever its name and type say): a disguised one
    // dropped and one picked are attached as the text files they are, named .svg, and said so.
    await deliver(page, 'drop', 'sneaky.png', 'image/png', base64Of('evil.svg'));
    await page
      .getByText(
        '"sneaky.png" is an SVG image: it is not sent as an image (SVG can hold script, and models take PNG, ' +
          'JPEG, GIF or WebP). It is attached as a text file instead, "sneaky.png.svg"',
      )
      .waitFor();
    const logo = path.join(app.dir, 'logo.svg');
    fs.copyFileSync(path.join(FIXTURES, 'evil.svg'), logo);
    await page.getByLabel('Attach files').setInputFiles(logo);
    await page.getByText('"logo.svg" is an SVG image: it is not sent as an image').waitFor();
    await expect.poll(() => chips.count()).toBe(5);
    expect(await chips.nth(3).innerText()).toMatch(/FILE\s*sneaky\.png\.svg/);
    expect(await chips.nth(4).innerText()).toMatch(/FILE\s*logo\.svg/);
    // Removing one leaves the others.
    await page.getByRole('button', { name: 'Remove photo.jpg' }).click();
    await expect.poll(() => chips.count()).toBe(4);
    await screenshot(page, 'attachments-staged');

    app.provider.enqueue({ kind: 'reply', text: 'the header is red' });
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => chips.count(), { timeout: 30_000 }).toBe(0);
    await waitForIdle(page);
    const message = (await readEvents(page, id)).find(
      (e): e is EventOf<'user_message'> => e.kind === 'user_message',
    );
    expect(message?.content.startsWith('what is wrong on this page?\n\nFiles the user attached')).toBe(true);
    expect(message?.attachments?.map((file) => [file.name, file.mimeType])).toEqual([
      ['image.png', 'image/png'],
      ['note.pdf', 'application/pdf'],
    ]);
    // The SVGs reached the session as files the model reads as text, never as images.
    const events = await readEvents(page, id);
    expect(events.flatMap((e) => (e.kind === 'file_staged' ? [e.path] : []))).toEqual([
      '/session/uploads/sneaky.png.svg',
      '/session/uploads/logo.svg',
    ]);
    expect(message?.content).toContain('- /session/uploads/sneaky.png.svg (');
    const uploads = path.join(app.home, 'sessions', id, 'workspace', 'session', 'uploads');
    expect(fs.readFileSync(path.join(uploads, 'logo.svg'))).toEqual(
      fs.readFileSync(path.join(FIXTURES, 'evil.svg')),
    );
    // The vision model got the image as an image part (its PDF as a note: chat completions take no files).
    const body = app.provider.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    // (The staged SVGs' notes come first, as text.)
    const user = body.messages.find(
      (m) => m.role === 'user' && JSON.stringify(m.content).includes('what is wrong on this page?'),
    );
    expect(JSON.stringify(user?.content)).toContain(`data:image/png;base64,${base64Of('red.png')}`);
    expect(JSON.stringify(body.messages)).not.toContain('data:image/svg');
    // The transcript shows the sent image under the message, read back through artifacts.image.
    const shown = page.getByAltText(/^Image 1 from your message \(image\/png/);
    await expect
      .poll(() => shown.getAttribute('src'), { timeout: 15_000 })
      .toBe(`data:image/png;base64,${base64Of('red.png')}`);
    await screenshot(page, 'attachments-sent');
    // Nothing in the app drew an SVG as an image (its script never ran in the page).
    expect(await page.locator('img[src*="svg" i]').count()).toBe(0);
    expect(watched.errors).toEqual([]);
  });

  it('stages any other file into /session/uploads, names it in the prompt, and refuses one too large', async () => {
    const watched = app.watch('attachments-uploads');
    const page = await app.goto();
    const id = await createSession(page, { title: 'Uploads', projectFolder: project });
    const csv = 'city,temp\nOslo,3\n';
    await deliver(page, 'drop', 'weather data.csv', 'text/csv', Buffer.from(csv).toString('base64'));
    await deliver(page, 'paste', 'trace.log', 'text/plain', Buffer.from('GET / 500\n').toString('base64'));
    const picked = path.join(app.dir, '.env-ish');
    fs.writeFileSync(picked, Buffer.from([0, 1, 2, 3]));
    await page.getByLabel('Attach files').setInputFiles(picked);
    const chips = page.getByTestId('attachment-chip');
    await expect.poll(() => chips.count()).toBe(3);
    expect(await chips.first().innerText()).toMatch(/FILE\s*weather data\.csv\s*17 B/);
    await page.getByText('The 3 files without a preview are staged at /session/uploads/').waitFor();
    // Over the app's limit: refused in words, nothing staged.
    await page.evaluate(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(${5 * 1024 * 1024}).fill(65)], 'dump.sql', { type: 'text/plain' }));
      document.querySelector('#composer-input').dispatchEvent(new ClipboardEvent('paste', { bubbles: true, cancelable: true, clipboardData: transfer }));
    })()`);
    await page
      .getByText('"dump.sql" is 5.0 MB; files other than images and PDFs are staged up to 4.0 MB from here')
      .waitFor();
    expect(await chips.count()).toBe(3);
    await screenshot(page, 'attachments-uploads');

    app.provider.enqueue({ kind: 'reply', text: 'read them' });
    await sendMessage(page, 'summarize these');
    await expect.poll(() => chips.count(), { timeout: 30_000 }).toBe(0);
    await waitForIdle(page);
    const events = await readEvents(page, id);
    const message = events.find((e): e is EventOf<'user_message'> => e.kind === 'user_message');
    expect(message?.attachments).toBeUndefined();
    expect(message?.content).toContain('summarize these');
    for (const line of [
      '- /session/uploads/weather data.csv (17 bytes)',
      '- /session/uploads/trace.log (10 bytes)',
      '- /session/uploads/env-ish (4 bytes)',
    ])
      expect(message?.content).toContain(line);
    const staged = events.filter((e): e is EventOf<'file_staged'> => e.kind === 'file_staged');
    expect(staged.map((e) => e.path)).toEqual([
      '/session/uploads/weather data.csv',
      '/session/uploads/trace.log',
      '/session/uploads/env-ish',
    ]);
    // The bytes are in the session's private area, where the model's tools read them.
    const uploads = path.join(app.home, 'sessions', id, 'workspace', 'session', 'uploads');
    expect(fs.readFileSync(path.join(uploads, 'weather data.csv'), 'utf8')).toBe(csv);
    expect([...fs.readFileSync(path.join(uploads, 'env-ish'))]).toEqual([0, 1, 2, 3]);
    expect(JSON.stringify(app.provider.requests.at(-1)?.body)).toContain('/session/uploads/trace.log');
    expect(watched.errors).toEqual([]);
  });

  it('says before sending that a model without vision gets a note instead of the image', async () => {
    const page = await app.goto();
    await createSession(page, { title: 'No vision', projectFolder: project });
    await deliver(page, 'paste', 'shot.png', 'image/png', base64Of('red.png'));
    await page
      .getByText('scripted-model does not take 1 image: the model gets a note naming the file instead')
      .waitFor();
    await screenshot(page, 'attachments-no-vision');
  });
});
