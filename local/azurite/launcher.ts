// Starts Azurite's queue service as a child process on a free loopback port, for tests and `npm start`.
// A child process (rather than Azurite's in-process server) keeps Azurite's global logger and telemetry
// out of the caller's process, and stopping it cannot leave sockets or timers behind in the caller.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../shared/observability/logger.js';
import { silentLogger } from '../../shared/observability/logger.js';

/** Azurite's well-known development account (public, documented by Microsoft; not a secret). */
export const azuriteAccountName = 'devstoreaccount1';
export const azuriteAccountKey =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface AzuriteOptions {
  /** Directory for Azurite's data. Without it Azurite keeps everything in memory. */
  location?: string;
  log?: Logger;
  /** How long to wait for Azurite to listen. */
  startTimeoutMs?: number;
}

export interface RunningAzurite {
  connectionString: string;
  queueEndpoint: string;
  stop(): Promise<void>;
}

const listeningPattern = /successfully listens on (https?:\/\/\S+)/;

export async function startAzurite(options: AzuriteOptions = {}): Promise<RunningAzurite> {
  const log = options.log ?? silentLogger;
  const require = createRequire(import.meta.url);
  const entry = require.resolve('azurite/dist/src/queue/main.js');
  // Azurite writes its telemetry and lock files into its working directory even when in memory, so it
  // gets a private one that is removed on stop.
  const workDirectory = await mkdtemp(join(tmpdir(), 'azurite-'));
  const args = [entry, '--queueHost', '127.0.0.1', '--queuePort', '0', '--silent', '--disableTelemetry'];
  if (options.location !== undefined) args.push('--location', options.location);
  else args.push('--inMemoryPersistence', '--extentMemoryLimit', '256');

  // process.execPath is the Node that runs us (22); the bin script's shebang would pick the system one.
  const child = spawn(process.execPath, args, { cwd: workDirectory, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  try {
    const endpointBase = await waitForListening(child, options.startTimeoutMs ?? 30_000, (chunk) => {
      output += chunk;
    });
    const queueEndpoint = `${endpointBase.replace(/\/$/, '')}/${azuriteAccountName}`;
    const connectionString =
      `DefaultEndpointsProtocol=http;AccountName=${azuriteAccountName};AccountKey=${azuriteAccountKey};` +
      `QueueEndpoint=${queueEndpoint};`;
    log.info('azurite queue service started', { queueEndpoint, pid: child.pid });

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        await terminate(child, exited);
        await rm(workDirectory, { recursive: true, force: true });
        log.info('azurite queue service stopped', { queueEndpoint });
      })();
      return stopping;
    };
    return { connectionString, queueEndpoint, stop };
  } catch (error) {
    await terminate(child, exited);
    await rm(workDirectory, { recursive: true, force: true });
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`Azurite did not start: ${message}\n${output}`, { cause: error });
  }
}

function waitForListening(
  child: ChildProcess,
  timeoutMs: number,
  onOutput: (chunk: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`not listening after ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      onOutput(chunk);
      stdout += chunk;
      const match = listeningPattern.exec(stdout);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', onOutput);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with code ${String(code)}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

async function terminate(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killTimer);
}
