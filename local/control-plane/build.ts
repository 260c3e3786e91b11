import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned versions; they must match the go.mod files under ./go. */
export const KUBERNETES_VERSION = 'v1.34.4';
export const ETCD_VERSION = 'v3.6.5';

export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
  /** Undefined only when KUBEBUILDER_ASSETS is used and the caller said it does not need it. */
  kubeScheduler: string | undefined;
  /** Undefined only when KUBEBUILDER_ASSETS is used and the caller said it does not need it. */
  kubeControllerManager: string | undefined;
}

export interface EnsureControlPlaneBinariesOptions {
  log?: (line: string) => void;
  /**
   * Whether kube-scheduler and kube-controller-manager are needed (default true). It only matters when
   * KUBEBUILDER_ASSETS supplies etcd and kube-apiserver: envtest assets carry neither of the other two, so
   * they are built here when needed and reported as undefined otherwise.
   */
  needSchedulerAndControllerManager?: boolean;
}

const goModulesDirectory = fileURLToPath(new URL('./go/', import.meta.url));
const kubernetesModule = path.join(goModulesDirectory, 'kubernetes');
const etcdModule = path.join(goModulesDirectory, 'etcd');

const kubernetesCommands = ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager'] as const;

const [kubernetesMajor, kubernetesMinor] = KUBERNETES_VERSION.replace(/^v/, '').split('.');
// What Kubernetes' own release build stamps in; without it /version says v0.0.0-master.
const kubernetesVersionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap(
  (pkg) => [
    `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
    `-X ${pkg}.gitMajor=${kubernetesMajor ?? ''}`,
    `-X ${pkg}.gitMinor=${kubernetesMinor ?? ''}`,
    `-X ${pkg}.gitTreeState=clean`,
  ],
);
const commonLinkerFlags = ['-s', '-w'];
const buildInfoFile = 'BUILD-INFO.json';

/** Where built binaries live: outside the repository, keyed by the Kubernetes version. */
export function controlPlaneCacheDirectory(): string {
  const cacheRoot = process.env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache');
  return path.join(cacheRoot, 'nodeclaim-azure', `kubernetes-${KUBERNETES_VERSION}`);
}

export async function ensureControlPlaneBinaries(
  options: EnsureControlPlaneBinariesOptions = {},
): Promise<ControlPlaneBinaries> {
  const log = options.log ?? (() => undefined);
  const needOthers = options.needSchedulerAndControllerManager ?? true;
  const assets = process.env['KUBEBUILDER_ASSETS'];

  if (assets) {
    const etcd = path.resolve(assets, 'etcd');
    const kubeApiserver = path.resolve(assets, 'kube-apiserver');
    await requireExecutable(etcd, 'KUBEBUILDER_ASSETS');
    await requireExecutable(kubeApiserver, 'KUBEBUILDER_ASSETS');
    log(`control plane: using etcd and kube-apiserver from KUBEBUILDER_ASSETS=${assets}`);
    if (!needOthers) {
      return { etcd, kubeApiserver, kubeScheduler: undefined, kubeControllerManager: undefined };
    }
    const built = await ensureBuilt(log);
    return { ...built, etcd, kubeApiserver };
  }
  return ensureBuilt(log);
}

async function ensureBuilt(log: (line: string) => void): Promise<ControlPlaneBinaries> {
  const versionDirectory = controlPlaneCacheDirectory();
  const binDirectory = path.join(versionDirectory, 'bin');
  const wanted = await sourceDigest();

  if ((await readBuildDigest(binDirectory)) === wanted) {
    return binariesIn(binDirectory);
  }

  await mkdir(versionDirectory, { recursive: true });
  const release = await acquireBuildLock(path.join(versionDirectory, 'build.lock'), log);
  try {
    // Another process may have finished the same build while this one waited for the lock.
    if ((await readBuildDigest(binDirectory)) === wanted) {
      return binariesIn(binDirectory);
    }
    await buildInto(versionDirectory, binDirectory, wanted, log);
    return binariesIn(binDirectory);
  } finally {
    await release();
  }
}

async function buildInto(
  versionDirectory: string,
  binDirectory: string,
  digest: string,
  log: (line: string) => void,
): Promise<void> {
  const go = await findGo();
  const started = Date.now();
  log(`control plane: building Kubernetes ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION} with ${go}`);
  log(`control plane: cache directory ${binDirectory}`);
  log('control plane: a cold build takes several minutes on two cores; later runs reuse the cache');

  // Build into a directory of its own and rename it into place at the end, so an interrupted build
  // never leaves a half-filled cache behind.
  // Holding the build lock means any partial directory is left over from a build that was killed.
  for (const entry of await readdir(versionDirectory)) {
    if (entry.startsWith('bin.partial-'))
      await rm(path.join(versionDirectory, entry), { recursive: true, force: true });
  }
  const staging = path.join(versionDirectory, `bin.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    await timedStep(`etcd ${ETCD_VERSION}`, log, () =>
      goBuild(
        go,
        etcdModule,
        commonLinkerFlags,
        ['-o', path.join(staging, 'etcd'), 'go.etcd.io/etcd/server/v3'],
        log,
      ),
    );
    await timedStep(`${kubernetesCommands.join(', ')} ${KUBERNETES_VERSION}`, log, () =>
      goBuild(
        go,
        kubernetesModule,
        [...commonLinkerFlags, ...kubernetesVersionFlags],
        [
          '-o',
          staging + path.sep,
          ...kubernetesCommands.map((command) => `k8s.io/kubernetes/cmd/${command}`),
        ],
        log,
      ),
    );
    await writeFile(
      path.join(staging, buildInfoFile),
      JSON.stringify(
        { kubernetesVersion: KUBERNETES_VERSION, etcdVersion: ETCD_VERSION, sourceDigest: digest },
        null,
        2,
      ) + '\n',
    );
    await rm(binDirectory, { recursive: true, force: true });
    await rename(staging, binDirectory);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  log(`control plane: build finished in ${formatDuration(Date.now() - started)}`);
}

async function timedStep(
  name: string,
  log: (line: string) => void,
  step: () => Promise<void>,
): Promise<void> {
  const started = Date.now();
  log(`control plane: go build ${name} ...`);
  await step();
  log(`control plane: go build ${name} took ${formatDuration(Date.now() - started)}`);
}

function goBuild(
  go: string,
  moduleDirectory: string,
  linkerFlags: string[],
  args: string[],
  log: (line: string) => void,
): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Static binaries: no C toolchain needed, and they run on any Linux of the same architecture.
    CGO_ENABLED: '0',
    // A go.work elsewhere on the machine must not change what gets built.
    GOWORK: 'off',
    GOFLAGS: [process.env['GOFLAGS'] ?? '', '-mod=readonly'].join(' ').trim(),
  };
  const fullArgs = ['build', '-trimpath', `-ldflags=${linkerFlags.join(' ')}`, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(go, fullArgs, { cwd: moduleDirectory, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    const collect = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        output.push(line);
        log(`  go: ${line}`);
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const started = Date.now();
    // go build is silent for minutes at a time; say that it is still alive.
    const heartbeat = setInterval(() => {
      log(`  still building (${formatDuration(Date.now() - started)} so far)`);
    }, 30_000);
    child.on('error', (error) => {
      clearInterval(heartbeat);
      reject(new Error(`could not run ${go}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) {
        resolve();
        return;
      }
      const tail = output.slice(-40).join('\n');
      reject(
        new Error(
          `go ${fullArgs.join(' ')} in ${moduleDirectory} failed (${signal ?? `exit code ${String(code)}`}):\n${tail}`,
        ),
      );
    });
  });
}

/** `go` from PATH, else the standard install location. */
export async function findGo(): Promise<string> {
  const candidates = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .filter((entry) => entry !== '')
    .map((entry) => path.join(entry, 'go'));
  candidates.push('/usr/local/go/bin/go');
  for (const candidate of candidates) {
    if (await isExecutable(candidate)) return candidate;
  }
  throw new Error(
    'Go is needed to build the local Kubernetes control plane, but `go` is neither on PATH nor at ' +
      '/usr/local/go/bin/go. Install Go 1.24 or newer, or set KUBEBUILDER_ASSETS to a directory holding ' +
      'etcd and kube-apiserver (kube-scheduler and kube-controller-manager still need Go).',
  );
}

/** Changes whenever the pinned sources change, so a cache built from other pins is rebuilt. */
async function sourceDigest(): Promise<string> {
  const hash = createHash('sha256');
  // The recipe is part of the key too: changed flags must not be served from an old cache.
  hash.update(JSON.stringify([commonLinkerFlags, kubernetesVersionFlags, ETCD_VERSION]));
  for (const module of [etcdModule, kubernetesModule]) {
    for (const file of ['go.mod', 'go.sum']) {
      hash.update(`${path.basename(module)}/${file}\n`);
      hash.update(await readFile(path.join(module, file)));
    }
  }
  return hash.digest('hex');
}

async function readBuildDigest(binDirectory: string): Promise<string | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(binDirectory, buildInfoFile), 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'sourceDigest' in parsed) {
      const digest = parsed.sourceDigest;
      return typeof digest === 'string' ? digest : undefined;
    }
    return undefined;
  } catch {
    return undefined;
  }
}

async function binariesIn(binDirectory: string): Promise<ControlPlaneBinaries> {
  const binaries: ControlPlaneBinaries = {
    etcd: path.join(binDirectory, 'etcd'),
    kubeApiserver: path.join(binDirectory, 'kube-apiserver'),
    kubeScheduler: path.join(binDirectory, 'kube-scheduler'),
    kubeControllerManager: path.join(binDirectory, 'kube-controller-manager'),
  };
  for (const binary of Object.values(binaries)) {
    if (binary !== undefined) await requireExecutable(binary, 'the control-plane cache');
  }
  return binaries;
}

/**
 * An exclusive lock file holding the owner's pid: two processes starting at once (a test run and
 * `npm start`) build once, and a lock left by a killed process is taken over.
 */
async function acquireBuildLock(lockPath: string, log: (line: string) => void): Promise<() => Promise<void>> {
  let announced = false;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if (!isErrnoException(error) || error.code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
    if (!Number.isInteger(owner) || !isProcessAlive(owner)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (!announced) {
      log(`control plane: waiting for the build already running in process ${owner}`);
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrnoException(error) && error.code === 'EPERM';
  }
}

async function requireExecutable(file: string, source: string): Promise<void> {
  if (!(await isExecutable(file))) {
    throw new Error(`${file} (from ${source}) is missing or not executable`);
  }
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    // Directories pass the X_OK check too, and a PATH entry like /usr/local holds a go/ directory.
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}

export function formatDuration(milliseconds: number): string {
  if (milliseconds < 60_000) return `${(milliseconds / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(milliseconds / 1000);
  const seconds = totalSeconds % 60;
  return `${Math.floor(totalSeconds / 60)}m${seconds.toString().padStart(2, '0')}s`;
}
