import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Hard limits a cgroup gives one run: a process count that binds root too, and memory that OOM-kills cleanly. */
export interface RunCgroupLimits {
  pidsMax?: number;
  memoryMb?: number;
}

/** A cgroup created for one run; the launcher joins it before exec, so every descendant is inside. */
export interface RunCgroup {
  /** Which limits are enforced by this cgroup. */
  enforces: { pids: boolean; memory: boolean };
  /** The `cgroup.procs` files the launcher writes its own PID to. */
  procsFiles: string[];
  /** PIDs currently in the run's cgroups. */
  members(): number[];
  /** True when the kernel OOM-killed a process of this run. */
  oomKilled(): boolean;
  /** Removes the cgroups (retrying while the last members exit). Never throws. */
  remove(): Promise<void>;
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/**
 * Creates cgroup v1 `pids` and/or `memory` groups for a run, nested under this process's own cgroup (so
 * the run stays inside whatever limits Keel itself runs under). Returns null when cgroup v1 controllers
 * are not writable (not root, cgroup v2 only): callers fall back to RLIMIT_AS and the PID namespace.
 */
export function createRunCgroup(runId: string, limits: RunCgroupLimits): RunCgroup | null {
  if (process.platform !== 'linux') return null;
  const created: { controller: string; dir: string }[] = [];
  const cleanup = (): void => {
    for (const { dir } of created) tryRmdir(dir);
  };
  try {
    if (limits.pidsMax !== undefined) {
      const dir = makeGroup('pids', runId);
      if (dir !== null) {
        created.push({ controller: 'pids', dir });
        writeFileSync(path.join(dir, 'pids.max'), String(limits.pidsMax));
      }
    }
    if (limits.memoryMb !== undefined) {
      const dir = makeGroup('memory', runId);
      if (dir !== null) {
        created.push({ controller: 'memory', dir });
        const bytes = String(limits.memoryMb * 1024 * 1024);
        writeFileSync(path.join(dir, 'memory.limit_in_bytes'), bytes);
        // With swap, the plain limit would let the run page out instead of dying; cap memory+swap too.
        const swapFile = path.join(dir, 'memory.memsw.limit_in_bytes');
        if (existsSync(swapFile)) writeFileSync(swapFile, bytes);
      }
    }
  } catch {
    cleanup();
    return null;
  }
  if (created.length === 0) return null;
  const memoryDir = created.find((group) => group.controller === 'memory')?.dir;
  return {
    enforces: {
      pids: created.some((group) => group.controller === 'pids'),
      memory: memoryDir !== undefined,
    },
    procsFiles: created.map(({ dir }) => path.join(dir, 'cgroup.procs')),
    members() {
      const pids = new Set<number>();
      for (const { dir } of created) {
        try {
          for (const line of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
            if (line.trim() !== '') pids.add(Number(line));
          }
        } catch {
          // Already removed.
        }
      }
      return [...pids];
    },
    oomKilled() {
      if (memoryDir === undefined) return false;
      try {
        const control = readFileSync(path.join(memoryDir, 'memory.oom_control'), 'utf8');
        const match = /oom_kill (\d+)/.exec(control);
        return match !== null && Number(match[1]) > 0;
      } catch {
        return false;
      }
    },
    async remove() {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const left = created.filter(({ dir }) => !tryRmdir(dir));
        if (left.length === 0) return;
        created.splice(0, created.length, ...left);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** True when this process can create run cgroups here (probes by creating and removing one). */
export function canCreateRunCgroups(): boolean {
  const probe = createRunCgroup(`probe-${process.pid}-${Date.now()}`, { pidsMax: 16, memoryMb: 64 });
  if (probe === null) return false;
  const complete = probe.enforces.pids && probe.enforces.memory;
  void probe.remove();
  return complete;
}

function makeGroup(controller: string, runId: string): string | null {
  const base = path.join(CGROUP_ROOT, controller);
  if (!existsSync(path.join(base, 'cgroup.procs'))) return null;
  const own = ownCgroupPath(controller);
  if (own === null) return null;
  const dir = path.join(base, own, `keel-${runId}`);
  mkdirSync(dir);
  return dir;
}

function ownCgroupPath(controller: string): string | null {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, groupPath] = line.split(':');
      if (controllers?.split(',').includes(controller) === true && groupPath !== undefined) return groupPath;
    }
  } catch {
    return null;
  }
  return null;
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
