// Ending a child process a test started (a Function App host), and waiting until it is gone: SIGKILL to
// stop it at whatever line it is on, SIGTERM to let it shut down. A child that already exited, or none,
// is left as it is.
import type { ChildProcess } from 'node:child_process';

export async function signalAndWait(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
