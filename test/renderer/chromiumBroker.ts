import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM, CHROMIUM_ARGS } from './harness.js';

/*
 * Vitest global setup (vitest.config.ts `globalSetup`): one Chromium for all the browser test files of a run,
 * each file in a browser context of its own (harness `launchBrowser`), instead of a Chromium started and
 * stopped per file (~40 launches a run, ~1 s of CPU each, on CI's 2 cores). Nothing is launched until a
 * file asks: a run without browser tests (a single file, the crash-safety reruns) never starts it. The files
 * ask this loopback broker, which launches Chromium once and answers its endpoint; the run's end closes it.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The broker's URL: a GET answers the shared Chromium's WebSocket endpoint, launching it the first time. */
    chromiumBroker: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let launched: Promise<BrowserServer> | undefined;
  const broker = createServer((_request, response) => {
    launched ??= chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    launched.then(
      (server) => response.end(server.wsEndpoint()),
      (error: Error) => {
        response.statusCode = 500;
        response.end(`cannot launch ${CHROMIUM}: ${error.message}`);
      },
    );
  });
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  project.provide('chromiumBroker', `http://127.0.0.1:${(broker.address() as AddressInfo).port}`);
  return async () => {
    broker.close();
    await (await launched?.catch(() => undefined))?.close();
  };
}
