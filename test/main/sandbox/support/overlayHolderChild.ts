// A stand-in for Keel's process in overlayView.test.ts: starts a view of argv's layers (JSON), writes a file
// through it, prints the holder's pid, then waits to be killed.
import fs from 'node:fs';
import path from 'node:path';
import { OverlayView, type OverlayLayers } from '../../../../main/sandbox/overlayView.js';

const layers = JSON.parse(process.argv[2] ?? '{}') as OverlayLayers;
const view = await OverlayView.start(layers);
fs.writeFileSync(view.hostPath(path.join(layers.mountpoint, 'kept.ts')), 'survives\n');
console.log(`holder ${view.pid}`);
setInterval(() => undefined, 60_000);
