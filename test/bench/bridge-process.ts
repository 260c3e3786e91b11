// The event bridge as its image runs it, for the memory bench: the JavaScript tsc emits (the Dockerfile's
// build stage, `tsc -p tsconfig.build.json` into dist/), started with the runtime stage's ENTRYPOINT and
// ENV (so any Node flag the image adds, such as --max-old-space-size, is measured too), configured through
// the Deployment's ConfigMap, and sending to a real queue (Azurite). What runs under tsx differs (its loader
// and transpile cache sit in the same heap), so only this figure says whether the Deployment's limit holds.
//
// Memory is read from outside, so nothing is added to the process but --trace-gc: peak RSS is the kernel's
// high-water mark (VmHWM in /proc/<pid>/status, what a cgroup limit is compared against, less page cache),
// and the heap figures are V8's own, from each collection it reports.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface ImageCommand {
  /** ENTRYPOINT, with `node` first: the Node flags and the entry file after it. */
  argv: string[];
  /** The runtime stage's ENV. */
  env: Record<string, string>;
}

/** The runtime stage of bridge/Dockerfile: its ENTRYPOINT (and CMD, if any) and its ENV lines. */
export function imageCommand(dockerfile = readFileSync(`${root}bridge/Dockerfile`, 'utf8')): ImageCommand {
  const lines = dockerfile.split('\n').map((line) => line.trim());
  const runtime = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const execForm = (instruction: string): string[] => {
    const line = runtime.findLast((candidate) => candidate.startsWith(`${instruction} `));
    if (line === undefined) return [];
    const parsed: unknown = JSON.parse(line.slice(instruction.length + 1));
    if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
      throw new Error(`bridge/Dockerfile: ${instruction} must be an exec-form JSON array of strings`);
    return parsed;
  };
  const argv = [...execForm('ENTRYPOINT'), ...execForm('CMD')];
  if (argv[0] !== 'node') throw new Error(`bridge/Dockerfile: the command must start with node: ${argv}`);
  const env: Record<string, string> = {};
  for (const line of runtime.filter((candidate) => candidate.startsWith('ENV '))) {
    for (const [, name, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
  }
  return { argv, env };
}

interface Manifest {
  kind: string;
  data?: Record<string, string>;
  spec?: {
    template: {
      spec: {
        containers: {
          args?: string[];
          env?: { name: string; value?: string }[];
          resources: { limits: { memory: string } };
        }[];
      };
    };
  };
}

function manifest(file: string): Manifest {
  return parse(readFileSync(`${root}${file}`, 'utf8')) as Manifest;
}

/** The bridge container's memory limit in the Deployment (infra/k8s/bridge/deployment.yaml), in bytes. */
export function deploymentMemoryLimitBytes(): number {
  const container = manifest('infra/k8s/bridge/deployment.yaml').spec?.template.spec.containers[0];
  const limit = container?.resources.limits.memory ?? '';
  const match = /^(\d+)(Mi|Gi)$/.exec(limit);
  if (!match) throw new Error(`the bridge Deployment's memory limit is not n Mi or n Gi: ${limit}`);
  return Number(match[1]) * 2 ** (match[2] === 'Gi' ? 30 : 20);
}

/** The Deployment's container arguments and fixed environment, which the image's command sees as well. */
function deploymentContainer(): { args: string[]; env: Record<string, string> } {
  const container = manifest('infra/k8s/bridge/deployment.yaml').spec?.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const variable of container?.env ?? [])
    if (variable.value !== undefined) env[variable.name] = variable.value;
  return { args: container?.args ?? [], env };
}

/** `npm run build`'s step for the bridge, as the Dockerfile's build stage runs it: dist/bridge/main.js. */
export async function buildBridge(): Promise<void> {
  const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
  const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`tsc -p tsconfig.build.json exited with ${code}`);
}

export interface BridgeRun {
  /** The kernel's high-water mark of the process's resident set. */
  peakRssBytes: number;
  /** RSS once the initial list is delivered and the outbox drained. */
  settledRssBytes: number;
  /** The most V8 held in its heap when it began a collection. */
  peakHeapBytes: number;
  /** What V8's last full collection kept. */
  liveHeapBytes: number;
  /** Start to informers synced and the outbox empty. */
  settleMs: number;
  /** The Node flags the image runs with. */
  nodeFlags: string[];
}

export interface BridgeRunOptions {
  kubeconfigPath: string;
  connectionString: string;
  queueName: string;
  healthPort: number;
  /** Whether the bridge has done its work (e.g. the queue holds what it should); once ready by default. */
  delivered?: () => Promise<boolean>;
  timeoutMs?: number;
  /** Node flags instead of the image's (and its NODE_OPTIONS), to compare a setting before it goes in. */
  nodeFlags?: string[];
}

// e.g. `[123:0x5d4c]   9012 ms: Mark-Compact 201.3 (215.2) -> 150.1 (160.4) MB, ...`
const gcLine =
  /: (Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Mark-sweep)\b.*? ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;

/** Starts the compiled bridge as the image does, waits until it has done its work, then stops it. */
export async function runImageBridge(options: BridgeRunOptions): Promise<BridgeRun> {
  const image = imageCommand();
  const deployment = deploymentContainer();
  const settings = manifest('infra/k8s/bridge/configmap.yaml').data ?? {};
  const [, ...rest] = image.argv;
  const entry = rest.findIndex((argument) => argument.endsWith('.js'));
  const flags = options.nodeFlags ?? rest.slice(0, entry);
  const argv = [...flags, '--trace-gc', ...rest.slice(entry), ...deployment.args];
  const { BRIDGE_QUEUE_SERVICE_URL: _identityOnly, ...configMap } = settings;
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    ...image.env,
    ...configMap,
    ...deployment.env,
    CLUSTER_NAME: 'bench',
    BRIDGE_QUEUE_NAME: options.queueName,
    BRIDGE_STORAGE_CONNECTION_STRING: options.connectionString,
    BRIDGE_HEALTH_PORT: String(options.healthPort),
    KUBECONFIG: options.kubeconfigPath,
  };
  if (options.nodeFlags !== undefined) delete env['NODE_OPTIONS'];
  // NODE_OPTIONS (the image's ENV, or the Deployment's env) first: Node reads it before its command line.
  const nodeFlags = [...(env['NODE_OPTIONS']?.split(/\s+/).filter(Boolean) ?? []), ...flags];
  const child = spawn(process.execPath, argv, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let peakHeapBytes = 0;
  let liveHeapBytes = 0;
  let errors = '';
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const match = gcLine.exec(line);
      if (!match) continue;
      peakHeapBytes = Math.max(peakHeapBytes, Number(match[2]) * 2 ** 20);
      if (match[1] !== 'Scavenge') liveHeapBytes = Number(match[4]) * 2 ** 20;
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-4_000)));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let exitCode: number | null | undefined;
  void exited.then(([code]) => (exitCode = code));

  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? 600_000);
  try {
    for (;;) {
      if (exitCode !== undefined) throw new Error(`the bridge exited with ${exitCode}: ${errors}`);
      if (Date.now() > deadline) throw new Error(`the bridge did not settle in time: ${errors}`);
      if ((await settled(options.healthPort)) && ((await options.delivered?.()) ?? true)) break;
      await sleep(250);
    }
    const settleMs = Date.now() - started;
    // Let the sends' and the list's transient buffers go, as a long-running bridge would.
    await sleep(2_000);
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const kib = (field: string): number =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
    return {
      peakRssBytes: kib('VmHWM'),
      settledRssBytes: kib('VmRSS'),
      peakHeapBytes,
      liveHeapBytes,
      settleMs,
      nodeFlags,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** /readyz says every informer synced, the queue is reachable and nothing waits in the outbox. */
async function settled(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`);
    const body = (await response.json()) as { informersSynced?: boolean; buffered?: number };
    return response.ok && body.informersSynced === true && body.buffered === 0;
  } catch {
    return false;
  }
}
