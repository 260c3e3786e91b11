import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export interface ComponentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** One control-plane binary running as a child of this Node process, its output going to a log file. */
export interface ComponentProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<ComponentExit>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs: number): Promise<void>;
}

const liveChildren = new Set<ChildProcess>();
const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Last line of defence: if the Node process exits without stop() having run, kill what it started.
 * Only synchronous work is possible in an 'exit' handler, hence SIGKILL and sync cleanups.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of liveChildren) child.kill('SIGKILL');
    for (const cleanup of exitCleanups) {
      try {
        cleanup();
      } catch {
        // Nothing useful can be done about a failed cleanup while the process is exiting.
      }
    }
  });
}

/** Runs `cleanup` synchronously if the Node process exits before the returned function is called. */
export function registerExitCleanup(cleanup: () => void): () => void {
  installExitHook();
  exitCleanups.add(cleanup);
  return () => {
    exitCleanups.delete(cleanup);
  };
}

export function startComponent(
  name: string,
  binary: string,
  args: string[],
  logPath: string,
): ComponentProcess {
  installExitHook();
  const logFd = openSync(logPath, 'w');
  let child: ChildProcess;
  try {
    child = spawn(binary, args, { stdio: ['ignore', logFd, logFd] });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(logFd);
  }
  liveChildren.add(child);

  let hasExited = false;
  const exited = new Promise<ComponentExit>((resolve) => {
    child.once('error', (error) => {
      hasExited = true;
      liveChildren.delete(child);
      resolve({ code: null, signal: null, error });
    });
    child.once('exit', (code, signal) => {
      hasExited = true;
      liveChildren.delete(child);
      resolve({ code, signal });
    });
  });

  return {
    name,
    // A spawn that fails (e.g. missing binary) has no pid; -1 never names a real process here.
    pid: child.pid ?? -1,
    logPath,
    exited,
    hasExited: () => hasExited,
    async stop(graceMs: number): Promise<void> {
      if (hasExited) return;
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const gracePeriod = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([exited, gracePeriod]);
      clearTimeout(timer);
      if (outcome === 'timeout') child.kill('SIGKILL');
      await exited;
    },
  };
}

export function describeExit(exit: ComponentExit): string {
  if (exit.error) return `could not start: ${exit.error.message}`;
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exited with code ${String(exit.code)}`;
}

export async function logTail(logPath: string, lines = 30): Promise<string> {
  try {
    const text = await readFile(logPath, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log output)';
  }
}
