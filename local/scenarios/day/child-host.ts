// Runs the day's Function App in a child process (host-process.ts) so the weather can kill it for real:
// SIGKILL stops it at any line, with no cleanup and no flush, and a new process resumes from the same
// durable history directory, as a restarted Azure Functions worker would.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DayHostConfig } from './host-process.js';

const entry = fileURLToPath(new URL('./host-process.ts', import.meta.url));

export interface ChildHost {
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts a new process on the same configuration; resolves once it reports ready. */
  start(): Promise<void>;
  /** SIGTERM (graceful: work in progress finishes); resolves once it is gone. */
  stop(): Promise<void>;
  /** How many processes were started so far. */
  readonly starts: number;
}

export function childHost(config: DayHostConfig, logLine: (line: string) => void): ChildHost {
  let child: ChildProcess | undefined;
  let starts = 0;
  const ended = (process: ChildProcess) =>
    process.exitCode !== null || process.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => process.once('exit', () => resolve()));
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    child = undefined;
    if (!current) return;
    const gone = ended(current);
    current.kill(signal);
    await gone;
  };
  return {
    get starts() {
      return starts;
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    start: async () => {
      if (child) return;
      starts += 1;
      const started = spawn(process.execPath, ['--import', 'tsx', entry], {
        env: { ...process.env, DAY_HOST_CONFIG: JSON.stringify(config) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      let partial = '';
      started.stderr?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line) logLine(line);
      });
      await new Promise<void>((resolve, reject) => {
        const failed = (code: number | null) =>
          reject(new Error(`the function host exited (${String(code)}) before it was ready`));
        started.once('exit', failed);
        started.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) {
            started.off('exit', failed);
            resolve();
          }
        });
      });
    },
  };
}
