import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import {
  detectLocalMachine,
  LOCAL_CATALOGUE,
  type LocalMachine,
  localModelsDir,
  pullModel,
  resolveModelSource,
  suggestLocalModel,
  type PullProgress,
} from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { formatTable } from '../format.js';

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** One progress line: bytes, speed, time left. */
export function progressLine(p: PullProgress): string {
  const left = p.secondsLeft === undefined ? '' : `, ${Math.ceil(p.secondsLeft)} s left`;
  return `${mb(p.received)}${p.total ? ` / ${mb(p.total)}` : ''} at ${mb(p.bytesPerSecond)}/s${left}`;
}

/** The machine in one phrase: its memory, and its GPU (backend, device, VRAM) or why there is none. */
export function describeMachine(machine: LocalMachine): string {
  const gb = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  const memory = `${gb(machine.ramBytes)} RAM`;
  if (machine.gpu === false) {
    return `${memory}, no GPU backend (CPU only${machine.problem ? `: ${machine.problem}` : ''})`;
  }
  const device = machine.gpuNames.length > 0 ? ` ${machine.gpuNames.join(', ')}` : '';
  const vram = machine.unifiedBytes > 0 ? 'memory shared with the CPU' : `${gb(machine.vramBytes)} VRAM`;
  return `${memory}, GPU ${machine.gpu}${device} (${vram})`;
}

/**
 * Issue 34: `keel models local list|pull|rm`: the catalogue with what is downloaded, downloads into
 * `<home>/models/` (resumable, hash-checked), and removal.
 */
export function registerLocalModels(models: Command, context: CliContext): void {
  const local = models.command('local').description('GGUF models Keel runs itself (no key, no server)');
  local
    .command('list', { isDefault: true })
    .description('the catalogue for this machine and the models downloaded')
    .action(async () => {
      const dir = localModelsDir(context.home());
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.gguf')) : [];
      const machine = await detectLocalMachine();
      const { entry: suggested, why } = suggestLocalModel(machine);
      context.io.stdout(
        `This machine: ${describeMachine(machine)}. Suggested: ${suggested.id} (${why}).\n\n`,
      );
      const rows = LOCAL_CATALOGUE.map((entry) => {
        const file = path.posix.basename(new URL(entry.url).pathname);
        return [
          entry.id,
          `~${(entry.approxBytes / 1e9).toFixed(1)} GB`,
          `${entry.minMemoryGb}+ GB`,
          entry.license,
          files.includes(file) ? 'downloaded' : '',
          entry.id === suggested.id ? 'suggested' : '',
        ];
      });
      context.io.stdout(`${formatTable(['MODEL', 'SIZE', 'MEMORY', 'LICENSE', '', ''], rows)}\n`);
      const others = files.filter((f) => !LOCAL_CATALOGUE.some((e) => e.url.endsWith(`/${f}`)));
      for (const file of others) context.io.stdout(`${path.join(dir, file)}\n`);
    });
  local
    .command('pull <model>')
    .description("download a catalogue model, hf:owner/repo/file.gguf or an https URL into Keel's home")
    .option('--sha256 <hex>', 'the expected SHA-256 (default: the one Hugging Face publishes)')
    .action(async (spec: string, options: { sha256?: string }) => {
      const source = resolveModelSource(spec);
      if (!source) {
        throw new CliError(
          `"${spec}" is not a catalogue model, an hf:owner/repo/file.gguf URI or an https URL`,
        );
      }
      if (options.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(options.sha256)) {
        throw new CliError('--sha256 takes 64 lowercase hex digits');
      }
      const dest = path.join(localModelsDir(context.home()), source.fileName);
      let last = 0;
      const pulled = await pullModel({
        url: source.url,
        dest,
        ...(options.sha256 ? { sha256: options.sha256 } : {}),
        onProgress: (p) => {
          if (Date.now() - last < 500 && p.received !== p.total) return;
          last = Date.now();
          context.io.stderr(`${progressLine(p)}\n`);
        },
      });
      context.io.stdout(`${pulled.path}\nsha256 ${pulled.sha256}\n`);
    });
  local
    .command('rm <model>')
    .description('delete a downloaded model (catalogue id or file name) and any partial download')
    .action((spec: string) => {
      const name = resolveModelSource(spec)?.fileName ?? path.basename(spec);
      const file = path.join(localModelsDir(context.home()), name);
      if (!fs.existsSync(file) && !fs.existsSync(`${file}.part`))
        throw new CliError(`${name} is not downloaded`);
      fs.rmSync(file, { force: true });
      fs.rmSync(`${file}.part`, { force: true });
      context.io.stdout(`removed ${file}\n`);
    });
}
