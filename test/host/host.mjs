// A host application written in plain Node that uses only the built `keel/core` package entry, as an
// app embedding Keel would. The test in this folder runs it as real child processes: `race` (two at once),
// `first` (stage a CSV between messages, stream a turn that reads it, commit manually) and `second` (a
// restart: find the session, read its status and trace, continue the conversation, retry a message).
import fs from 'node:fs';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHarness, generateHarness, streamHarness } from 'keel/core';

const config = JSON.parse(process.env.KEEL_HOST_CONFIG ?? '{}');
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

function harness() {
  return createHarness({
    home: config.home,
    model: {
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: config.baseUrl,
      contextWindow: 32000,
    },
    persistentDirs: { project: config.project, notes: { path: config.notes, commit: 'manual' } },
    policy: 'full-auto',
    env: { PATH: process.env.PATH },
  });
}

const m1 = { id: 'm1', role: 'user', content: 'Hello, I will send you our sales data.' };
const a1 = { id: 'a1', role: 'assistant', content: 'Great, send it over.' };
const m2 = { id: 'm2', role: 'user', content: 'Summarize sales.csv into notes/summary.md' };
const a2 = { id: 'a2', role: 'assistant', content: 'Done.' };
const m3 = { id: 'm3', role: 'user', content: 'What did you write?' };

async function race() {
  while (Date.now() < config.startAt) await sleep(1);
  const session = await harness().sessions.getOrCreate({
    id: config.sessionId,
    extraBody: { by: process.pid },
  });
  out({ pid: process.pid, id: session.id, dataDir: session.dataDir });
}

async function first() {
  const keel = harness();
  const session = await keel.sessions.getOrCreate({
    id: config.sessionId,
    extraBody: { userId: 'user_123' },
    metadata: { host: 'plain-node' },
  });
  const hello = await generateHarness({ harness: keel, session, messages: [m1] });
  out({ step: 'hello', text: hello.text });

  // Data arrives between messages: streamed from disk, never held whole in memory.
  const staged = await session.files.write('/session/uploads/sales.csv', fs.createReadStream(config.csv), {
    mediaType: 'text/csv',
    source: 'upload',
    messageId: 'm2',
  });
  out({ step: 'staged', staged });

  const stream = streamHarness({ harness: keel, session, messages: [m1, a1, m2] });
  let text = '';
  const kinds = [];
  for await (const part of stream) {
    if (part.type === 'text') text += part.text;
    if (part.type === 'event') kinds.push(part.event.kind);
  }
  const result = await stream.result;
  out({
    step: 'summarize',
    text,
    kinds,
    outcome: result.outcome.status,
    hasCommitManual: typeof result.commitManual,
  });
  out({ step: 'uncommitted', dirs: await session.uncommitted() });
  out({ step: 'commitManual', reports: await result.commitManual() });
  await session.setStatus({ label: 'summarized' });
  out({ step: 'status', status: await session.status() });
}

async function second() {
  const keel = harness();
  const session = await keel.sessions.get(config.sessionId);
  if (!session) throw new Error('the session was not found after the restart');
  out({ step: 'status', status: await session.status() });
  out({ step: 'trace', stages: [...new Set((await session.trace.read()).map((t) => t.stage))] });
  out({ step: 'artifacts', handles: (await session.artifacts.list()).map((a) => a.handle) });
  const answer = await generateHarness({
    harness: keel,
    session: config.sessionId,
    messages: [m1, a1, m2, a2, m3],
  });
  out({ step: 'answer', text: answer.text, alreadyStaged: answer.alreadyStaged });
  const retry = await generateHarness({ harness: keel, session, messages: [m1, a1, m2, a2, m3] });
  out({ step: 'retry', text: retry.text, alreadyStaged: retry.alreadyStaged });
}

const phases = { race, first, second };
const phase = phases[process.argv[2]];
if (!phase) {
  process.stderr.write(`usage: host.mjs ${Object.keys(phases).join('|')}\n`);
  process.exit(2);
}
phase().catch((error) => {
  process.stderr.write(`host: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
