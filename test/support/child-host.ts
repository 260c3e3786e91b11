// The parent's side of a Function App run in a child process (reporting-host-process.ts) on a durable
// history directory: start it, kill it with SIGKILL at whatever line it is on, start another on the same
// history, and keep what every one of them reported of its orchestrations, so a test can check the
// outcome of each workflow across the processes. The children's log is kept (the last lines) rather
// than printed: an outage makes a host warn on every request, which would bury the test's own output.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HostEvent } from '../../local/host/index.js';
import { signalAndWait } from './child-exit.js';
import type { HostProcessConfig } from './host-process.js';

export const HOST_EVENT_PREFIX = 'host-event ';

const hostScript = fileURLToPath(new URL('./reporting-host-process.ts', import.meta.url));
const KEPT_LOG_LINES = 400;
/** How long a SIGTERM'd host may take to finish its work before it is killed. */
const STOP_GRACE_MS = 20_000;

export interface ReportedHostEvent {
  /** Date.now() in the parent when the line arrived. */
  at: number;
  /** 1 for the first process started, 2 for the next, … */
  process: number;
  event: HostEvent;
}

export interface ChildHost {
  /** Every orchestration event any of the processes reported, in arrival order. */
  readonly events: readonly ReportedHostEvent[];
  readonly running: boolean;
  /** Starts a process on the history directory; resolves once it said "ready". */
  start(): Promise<void>;
  /** SIGKILL: no cleanup, no flush; its workflows stop wherever they are. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within a grace period. */
  stop(): Promise<void>;
  /** The last lines the processes wrote to stderr (their warnings and errors). */
  recentLog(): string[];
}

/** Splits a stream into lines, a line split across chunks joined again. */
function onLines(stream: NodeJS.ReadableStream | null, line: (text: string) => void): void {
  let rest = '';
  stream?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const text of lines) line(text);
  });
}

export function childHost(config: HostProcessConfig): ChildHost {
  const events: ReportedHostEvent[] = [];
  const log: string[] = [];
  let child: ChildProcess | undefined;
  let started = 0;

  const keep = (text: string) => {
    log.push(text);
    if (log.length > KEPT_LOG_LINES) log.splice(0, log.length - KEPT_LOG_LINES);
  };

  return {
    events,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) throw new Error('a host process is running already');
      const number = ++started;
      const spawned = spawn(process.execPath, ['--import', 'tsx', hostScript], {
        env: { ...process.env, HOST_PROCESS_CONFIG: JSON.stringify(config) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = spawned;
      onLines(spawned.stderr, (text) => keep(`[host ${number}] ${text}`));
      await new Promise<void>((resolve, reject) => {
        const failed = (code: number | null) => {
          child = undefined;
          reject(new Error(`host process ${number} exited with ${String(code)} before it was ready`));
        };
        spawned.once('exit', failed);
        onLines(spawned.stdout, (text) => {
          if (text.startsWith(HOST_EVENT_PREFIX)) {
            const event = JSON.parse(text.slice(HOST_EVENT_PREFIX.length)) as HostEvent;
            events.push({ at: Date.now(), process: number, event });
          } else if (text === 'ready') {
            spawned.off('exit', failed);
            resolve();
          }
        });
      });
    },
    async kill() {
      const running = child;
      child = undefined;
      await signalAndWait(running, 'SIGKILL');
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running) return;
      const timer = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
      try {
        await signalAndWait(running, 'SIGTERM');
      } finally {
        clearTimeout(timer);
      }
    },
    recentLog: () => [...log],
  };
}
