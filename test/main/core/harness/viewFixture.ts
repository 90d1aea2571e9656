// Issue #36: the home the view suites share (viewCheckout, viewConcurrency): a git project outside /tmp, a Keel home
// whose settings ask for copy-on-write views, the loopback provider, and why the suite must skip on this machine.
import fs from 'node:fs';
import path from 'node:path';
import { detectSandbox } from '../../../../main/sandbox/box.js';
import { readSettings, writeSettings } from '../../../../main/store/settings.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, overlayHere } from '../persistent/support.js';

export type ViewHome = {
  dir: string;
  home: string;
  project: string;
  server: ProviderServer;
  /** Why this machine cannot run the suite (no overlay in a user namespace, no bwrap), or undefined. */
  skip: string | undefined;
};

/** A home asking for views over a new repository of `files`, in a folder named `prefix...` under /var/tmp. */
export async function viewHome(prefix: string, files: Record<string, string>): Promise<ViewHome> {
  // Outside /tmp, which the box replaces by an empty tmpfs: the project (the view's lower folder) must be visible.
  const dir = fs.realpathSync(fs.mkdtempSync(`/var/tmp/${prefix}`));
  const home = path.join(dir, 'home');
  const project = makeRepo(path.join(dir, 'project'), files);
  fs.mkdirSync(home, { recursive: true });
  writeSettings(home, {
    ...readSettings(home),
    checkouts: { storageLimitMB: 2048, idleMinutes: 60, kind: 'view' },
  });
  const support = await overlayHere();
  const sandbox = await detectSandbox();
  const skip = !support.available ? support.reason : sandbox.kind !== 'bwrap' ? sandbox.reason : undefined;
  return { dir, home, project, server: await new ProviderServer().start(), skip };
}
