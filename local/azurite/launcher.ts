// Starts Azurite's queue and table services as child processes on a free loopback port, for tests and `npm start`.
// A child process (rather than Azurite's in-process server) keeps Azurite's global logger and telemetry
// out of the caller's process, and stopping it cannot leave sockets or timers behind in the caller.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../shared/observability/logger.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { findFreeLoopbackPorts } from '../control-plane/ports.js';

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
  /**
   * Also start the blob service, which the real Functions host needs (leases, timers, Durable Functions)
   * when Functions Core Tools runs the app against this stack.
   */
  blob?: boolean;
}

export interface RunningAzurite {
  /** Queue and table endpoints of the development account, as the Azure SDKs expect. */
  connectionString: string;
  queueEndpoint: string;
  tableEndpoint: string;
  blobEndpoint?: string;
  stop(): Promise<void>;
}

type AzuriteService = 'queue' | 'table' | 'blob';

interface RunningService {
  endpoint: string;
  stop(): Promise<void>;
}

/** Starts the queue service (triggers, the bridge) and the table service (the unavailable-offerings record). */
export async function startAzurite(options: AzuriteOptions = {}): Promise<RunningAzurite> {
  const log = options.log ?? silentLogger;
  const started = await Promise.allSettled([
    startService('queue', options),
    startService('table', options),
    ...(options.blob ? [startService('blob', options)] : []),
  ]);
  const services = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) {
    await Promise.all(services.map((service) => service.stop()));
    throw failure.reason;
  }
  const [queue, table, blob] = services as [RunningService, RunningService, RunningService | undefined];
  const connectionString =
    `DefaultEndpointsProtocol=http;AccountName=${azuriteAccountName};AccountKey=${azuriteAccountKey};` +
    `QueueEndpoint=${queue.endpoint};TableEndpoint=${table.endpoint};` +
    (blob ? `BlobEndpoint=${blob.endpoint};` : '');
  log.info('azurite started', { queueEndpoint: queue.endpoint, tableEndpoint: table.endpoint });
  let stopping: Promise<void> | undefined;
  return {
    connectionString,
    queueEndpoint: queue.endpoint,
    tableEndpoint: table.endpoint,
    ...(blob ? { blobEndpoint: blob.endpoint } : {}),
    stop: () => {
      stopping ??= Promise.all(services.map((service) => service.stop())).then(() =>
        log.info('azurite stopped'),
      );
      return stopping;
    },
  };
}

async function startService(service: AzuriteService, options: AzuriteOptions): Promise<RunningService> {
  const require = createRequire(import.meta.url);
  const entry = require.resolve(`azurite/dist/src/${service}/main.js`);
  // Azurite writes its telemetry and lock files into its working directory even when in memory, so it
  // gets a private one that is removed on stop.
  const workDirectory = await mkdtemp(join(tmpdir(), `azurite-${service}-`));
  // The queue service reports the port it got for port 0; the others may not, so they get a free port
  // chosen here.
  const [port] = service === 'queue' ? [0] : await findFreeLoopbackPorts(1);
  const args = [
    entry,
    `--${service}Host`,
    '127.0.0.1',
    `--${service}Port`,
    String(port),
    '--silent',
    '--disableTelemetry',
  ];
  if (options.location !== undefined) args.push('--location', join(options.location, service));
  else args.push('--inMemoryPersistence');
  if (options.location === undefined && service === 'queue') args.push('--extentMemoryLimit', '256');

  // process.execPath is the Node that runs us (22); the bin script's shebang would pick the system one.
  const child = spawn(process.execPath, args, { cwd: workDirectory, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  try {
    const endpointBase = await waitForListening(child, options.startTimeoutMs ?? 30_000, (chunk) => {
      output += chunk;
    });
    const endpoint = `http://${endpointBase.replace(/\/$/, '')}/${azuriteAccountName}`;
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        await terminate(child, exited);
        await rm(workDirectory, { recursive: true, force: true });
      })();
      return stopping;
    };
    return { endpoint, stop };
  } catch (error) {
    await terminate(child, exited);
    await rm(workDirectory, { recursive: true, force: true });
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`Azurite ${service} service did not start: ${message}\n${output}`, { cause: error });
  }
}

// The queue service says "successfully listens on http://127.0.0.1:PORT"; the table service says
// "successfully started on 127.0.0.1:PORT".
const listeningPattern = /successfully (?:listens on|started on) (?:https?:\/\/)?(\S+:[1-9]\d*)/;

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
