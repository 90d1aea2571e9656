import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the closing summary names. */
const SLOWEST = 15;

/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, after Vitest's own summary so CI
 * (which reads a runner's closing line) can tell a green run from one that ran nothing. Above it, the slowest
 * files (their tests' and hooks' time, plus their import): where to look first when CI's time grows.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    const timed = testModules
      .map((module) => {
        const { duration, collectDuration } = module.diagnostic();
        return {
          name: module.moduleId.replace(`${process.cwd()}/`, ''),
          seconds: (duration + collectDuration) / 1000,
        };
      })
      .sort((a, b) => b.seconds - a.seconds);
    if (timed.length > SLOWEST) {
      const total = timed.reduce((sum, file) => sum + file.seconds, 0);
      process.stdout.write(`\nslowest files (of ${timed.length}, ${Math.round(total)} s in all):\n`);
      for (const file of timed.slice(0, SLOWEST)) {
        process.stdout.write(`${file.seconds.toFixed(1).padStart(7)} s  ${file.name}\n`);
      }
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
