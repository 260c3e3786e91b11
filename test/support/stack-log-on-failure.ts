// What a failed test prints of its stack's log, so a CI log shows where it stuck: every warning and error
// of the run (up to a bound) and the last lines at info and above. With STACK_LOG_DIR set, the whole log
// (debug included) of each failed test is also written there, one JSON line per entry.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { LaunchStack } from './launch-stack.js';

const WARNINGS_ON_FAILURE = 200;
const LAST_LINES_ON_FAILURE = 150;

/** Registers, for the calling test file, a print of the stack's log after each failed test. */
export function printStackLogOnFailure(stackOf: () => LaunchStack | undefined): void {
  afterEach((context) => {
    if (context.task.result?.state !== 'fail') return;
    let logs: LaunchStack['logs'] = [];
    try {
      logs = stackOf()?.logs ?? [];
    } catch {
      // The stack never started: its own error says why.
    }
    const lines = (entries: typeof logs) => entries.map((entry) => JSON.stringify(entry.record));
    const directory = process.env.STACK_LOG_DIR;
    if (directory) {
      const file = join(directory, `${context.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.jsonl`);
      writeFileSync(file, lines(logs).join('\n') + '\n');
    }
    const warnings = logs
      .filter((l) => l.level === 'warn' || l.level === 'error')
      .slice(-WARNINGS_ON_FAILURE);
    const last = logs.filter((l) => l.level !== 'debug').slice(-LAST_LINES_ON_FAILURE);
    console.log(
      [
        `the stack's warnings and errors (the last ${warnings.length}):`,
        ...lines(warnings),
        `the stack's last ${last.length} log lines (info and above):`,
        ...lines(last),
      ].join('\n'),
    );
  });
}
