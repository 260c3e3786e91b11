import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { ensureControlPlaneBinaries, formatDuration } from './build.js';
import { applyCrds, readCrdDirectories } from './crds.js';
import { writeKubeconfig } from './kubeconfig.js';
import {
  createControlPlanePki,
  frontProxyClientName,
  type ClientIdentity,
  type ControlPlanePki,
} from './pki.js';
import { findFreeLoopbackPorts } from './ports.js';
import { describeExit, registerExitCleanup, startComponent, type ComponentProcess } from './processes.js';
import { waitUntilHealthy } from './readiness.js';

export interface StartControlPlaneOptions {
  /** Kept after stop() when given (logs, kubeconfigs, certificates); otherwise a temp dir that stop() removes. */
  workDir?: string;
  /** Run kube-scheduler (default true). */
  scheduler?: boolean;
  /** Run kube-controller-manager (default true). */
  controllerManager?: boolean;
  /** Directories whose *.yaml / *.yml CustomResourceDefinitions are applied and awaited until Established. */
  crdDirectories?: string[];
  log?: (line: string) => void;
  /** How long each component may take to become ready (default 120 s: the machine may be busy). */
  readyTimeoutMs?: number;
  /**
   * The API client rate of kube-scheduler and kube-controller-manager (--kube-api-qps / --kube-api-burst);
   * their defaults when absent (scheduler 50 / 100, controller-manager 20 / 30).
   */
  componentClientRate?: { qps: number; burst: number };
}

export interface ControlPlaneProcess {
  name: string;
  pid: number;
  logPath: string;
}

export interface ControlPlane {
  /** Admin (system:masters) kubeconfig with embedded certificates. */
  kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  server: string;
  caCertPath: string;
  /** The CA's key, to issue client certificates for the identities the stack runs as. */
  caKeyPath: string;
  workDir: string;
  /** The running components, so callers can tell their logs apart or check they are gone. */
  processes: readonly ControlPlaneProcess[];
  /**
   * kube-apiserver alone, for an outage: `stop` ends it (etcd, kube-scheduler and
   * kube-controller-manager keep running, so every client meets refused connections), `start` runs it
   * again on the same port with the same flags and resolves once it is ready.
   */
  apiServer: { stop(): Promise<void>; start(): Promise<void> };
  /** Stops every component (SIGTERM, then SIGKILL after a grace period) and removes a temp workDir. */
  stop(): Promise<void>;
}

const stopGraceMs = 10_000;
// The service range is only an allocation pool inside the API server: nothing is routed to it.
const serviceClusterIpRange = '10.0.0.0/24';

export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => undefined);
  const runScheduler = options.scheduler ?? true;
  const runControllerManager = options.controllerManager ?? true;
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const started = Date.now();

  const binaries = await ensureControlPlaneBinaries({
    log,
    needSchedulerAndControllerManager: runScheduler || runControllerManager,
  });
  // Read CRDs before starting anything, so a malformed file fails fast.
  const crds = await readCrdDirectories(options.crdDirectories ?? []);

  const ownsWorkDir = options.workDir === undefined;
  const workDir = options.workDir
    ? path.resolve(options.workDir)
    : await mkdtemp(path.join(tmpdir(), 'nodeclaim-control-plane-'));
  const unregisterCleanup = ownsWorkDir
    ? registerExitCleanup(() => rmSync(workDir, { recursive: true, force: true }))
    : () => undefined;

  const components: ComponentProcess[] = [];
  // Components stopped on purpose while the control plane runs (an API server outage): not a failure.
  const stoppedOnPurpose = new Set<ComponentProcess>();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Clients of the API server first, then the API server, then its storage.
    const layers = [
      components.filter((c) => c.name === 'kube-scheduler' || c.name === 'kube-controller-manager'),
      components.filter((c) => c.name === 'kube-apiserver'),
      components.filter((c) => c.name === 'etcd'),
    ];
    for (const layer of layers) await Promise.all(layer.map((component) => component.stop(stopGraceMs)));
    if (ownsWorkDir) await rm(workDir, { recursive: true, force: true });
    unregisterCleanup();
  };

  try {
    const pkiDirectory = path.join(workDir, 'pki');
    const etcdDataDirectory = path.join(workDir, 'etcd-data');
    // Every start is a fresh cluster, even in a reused workDir: etcd remembers its peer URL, and ports change.
    await rm(etcdDataDirectory, { recursive: true, force: true });
    await mkdir(pkiDirectory, { recursive: true });
    const pki = await createControlPlanePki(pkiDirectory);

    const [etcdClientPort, etcdPeerPort, apiserverPort, schedulerPort, controllerManagerPort] =
      await findFreeLoopbackPorts(5);
    if (
      etcdClientPort === undefined ||
      etcdPeerPort === undefined ||
      apiserverPort === undefined ||
      schedulerPort === undefined ||
      controllerManagerPort === undefined
    ) {
      throw new Error('could not reserve loopback ports');
    }
    const server = `https://127.0.0.1:${apiserverPort}`;
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const logPath = (name: string): string => path.join(workDir, `${name}.log`);
    const launch = (name: string, binary: string, args: string[]): ComponentProcess => {
      const component = startComponent(name, binary, args, logPath(name));
      components.push(component);
      // A component dying later leaves a half-working cluster; say so where the caller looks.
      void component.exited.then((exit) => {
        if (!stopped && !stoppedOnPurpose.has(component))
          log(`control plane: ${name} ${describeExit(exit)} unexpectedly; see ${component.logPath}`);
      });
      return component;
    };
    const timed = async (what: string, wait: () => Promise<void>): Promise<void> => {
      const since = Date.now();
      await wait();
      log(`control plane: ${what} ready in ${formatDuration(Date.now() - since)}`);
    };

    const etcd = launch('etcd', binaries.etcd, [
      '--name=local',
      `--data-dir=${etcdDataDirectory}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=local=http://127.0.0.1:${etcdPeerPort}`,
      // A throwaway test store: durability against power loss buys nothing and fsync costs seconds.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await timed('etcd', () => waitUntilHealthy(etcd, { url: `${etcdUrl}/health` }, readyTimeoutMs));

    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiserverPort}`,
      `--cert-dir=${path.join(workDir, 'kube-apiserver')}`,
      `--tls-cert-file=${pki.apiserverCert}`,
      `--tls-private-key-file=${pki.apiserverKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      `--service-cluster-ip-range=${serviceClusterIpRange}`,
      // As on AKS: nodes join with bootstrap tokens, and the Node authorizer and NodeRestriction admission
      // judge what a node's own credentials may do.
      '--authorization-mode=Node,RBAC',
      '--enable-bootstrap-token-auth=true',
      '--enable-admission-plugins=NodeRestriction',
      // Request-header authentication: without it kube-scheduler, kube-controller-manager and any
      // aggregated API server find no front-proxy CA in kube-system/extension-apiserver-authentication.
      `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
      `--requestheader-allowed-names=${frontProxyClientName}`,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${pki.frontProxyClient.cert}`,
      `--proxy-client-key-file=${pki.frontProxyClient.key}`,
      '--allow-privileged=true',
      // The "kubernetes" Service would point at 127.0.0.1, which Endpoints validation rightly refuses.
      '--endpoint-reconciler-type=none',
      '--profiling=false',
    ];
    const adminCert = await readFile(pki.admin.cert);
    const adminKey = await readFile(pki.admin.key);
    const caCert = await readFile(pki.caCert);
    let apiserver = launch('kube-apiserver', binaries.kubeApiserver, apiserverArgs);
    const apiserverReady = (process: ComponentProcess) =>
      waitUntilHealthy(
        process,
        { url: `${server}/readyz`, ca: caCert, clientCert: adminCert, clientKey: adminKey },
        readyTimeoutMs,
      );
    await timed('kube-apiserver', () => apiserverReady(apiserver));
    const apiServer: ControlPlane['apiServer'] = {
      stop: async () => {
        stoppedOnPurpose.add(apiserver);
        await apiserver.stop(stopGraceMs);
      },
      start: async () => {
        if (stopped || !apiserver.hasExited()) return;
        apiserver = launch('kube-apiserver', binaries.kubeApiserver, apiserverArgs);
        await apiserverReady(apiserver);
      },
    };

    const kubeconfigPath = path.join(workDir, 'admin.kubeconfig');
    await writeKubeconfig(kubeconfigPath, {
      server,
      caCertPath: pki.caCert,
      clientCertPath: pki.admin.cert,
      clientKeyPath: pki.admin.key,
      userName: 'admin',
    });

    const componentKubeconfig = async (name: string, identity: ClientIdentity): Promise<string> => {
      const file = path.join(workDir, `${name}.kubeconfig`);
      await writeKubeconfig(file, {
        server,
        caCertPath: pki.caCert,
        clientCertPath: identity.cert,
        clientKeyPath: identity.key,
        userName: name,
      });
      return file;
    };

    const rate = options.componentClientRate;
    const clientRateArgs = rate ? [`--kube-api-qps=${rate.qps}`, `--kube-api-burst=${rate.burst}`] : [];
    const waits: Promise<void>[] = [];
    if (runScheduler) {
      if (!binaries.kubeScheduler) throw new Error('kube-scheduler is not available');
      const scheduler = launch('kube-scheduler', binaries.kubeScheduler, [
        ...servingComponentArgs(await componentKubeconfig('kube-scheduler', pki.scheduler), {
          port: schedulerPort,
          certDirectory: path.join(workDir, 'kube-scheduler'),
        }),
        // Honoured because the scheduler runs without --config (the flags are deprecated in favour of it).
        ...clientRateArgs,
      ]);
      waits.push(
        timed('kube-scheduler', () =>
          waitUntilHealthy(scheduler, { url: `https://127.0.0.1:${schedulerPort}/readyz` }, readyTimeoutMs),
        ),
      );
    }
    if (runControllerManager) {
      if (!binaries.kubeControllerManager) throw new Error('kube-controller-manager is not available');
      const controllerManager = launch('kube-controller-manager', binaries.kubeControllerManager, [
        ...servingComponentArgs(await componentKubeconfig('kube-controller-manager', pki.controllerManager), {
          port: controllerManagerPort,
          certDirectory: path.join(workDir, 'kube-controller-manager'),
        }),
        ...controllerManagerArgs(pki),
        ...clientRateArgs,
      ]);
      waits.push(
        timed('kube-controller-manager', async () => {
          await waitUntilHealthy(
            controllerManager,
            { url: `https://127.0.0.1:${controllerManagerPort}/healthz` },
            readyTimeoutMs,
          );
          // Pods cannot be created in a namespace before its `default` ServiceAccount exists (the
          // ServiceAccount admission refuses them with 403); the controller-manager creates it shortly
          // after it starts. Ready means a test can create a pod in `default`.
          await waitUntilHealthy(
            controllerManager,
            {
              url: `${server}/api/v1/namespaces/default/serviceaccounts/default`,
              ca: caCert,
              clientCert: adminCert,
              clientKey: adminKey,
            },
            readyTimeoutMs,
          );
        }),
      );
    }
    if (crds.length > 0) {
      waits.push(timed(`${crds.length} CRD(s)`, () => applyCrds(kubeconfigPath, crds, readyTimeoutMs, log)));
    }
    // allSettled, so that a failure is reported only after the other waits stopped touching the processes.
    const outcomes = await Promise.allSettled(waits);
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;

    log(`control plane: ready at ${server} in ${formatDuration(Date.now() - started)} (work dir ${workDir})`);
    return {
      kubeconfigPath,
      server,
      caCertPath: pki.caCert,
      caKeyPath: pki.caKey,
      workDir,
      processes: components.map(({ name, pid, logPath: componentLog }) => ({
        name,
        pid,
        logPath: componentLog,
      })),
      apiServer,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Flags kube-scheduler and kube-controller-manager share: identity, serving endpoint, single instance. */
function servingComponentArgs(
  kubeconfigPath: string,
  serving: { port: number; certDirectory: string },
): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    // Delegated authentication and authorization of their own /metrics etc. go through the same identity.
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${serving.port}`,
    `--cert-dir=${serving.certDirectory}`,
    // One instance per cluster: waiting for a lease would only delay the start.
    '--leader-elect=false',
  ];
}

function controllerManagerArgs(pki: ControlPlanePki): string[] {
  return [
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    // As in a real cluster: each controller acts under its own RBAC role, not the narrow manager identity.
    '--use-service-account-credentials=true',
    `--service-cluster-ip-range=${serviceClusterIpRange}`,
    '--profiling=false',
  ];
}
