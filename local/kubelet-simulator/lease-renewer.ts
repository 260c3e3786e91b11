// The simulated kubelets' Lease renewals, from a process of their own (lease-renewer-process.ts), for
// a cluster of hundreds of nodes.
//
// Why: in the scale scenario one Node.js process runs the function host, the bridge, the ARM emulator,
// the recorder and this simulator. At 1,000 nodes on two cores its event loop stalled long enough (a
// 1 GiB heap's collections, a disruption pass over 1,000 NodeClaims) that renewals came later than the
// node-monitor grace period: the real kube-controller-manager marked Nodes Ready=Unknown and node
// repair rebooted 326 healthy ones, which then took the drift's budget. Real kubelets run on machines
// of their own, so a process that does nothing but renew Leases models them better than a shared event
// loop does. The rest of each kubelet (registration, status reports, pods) stays in the simulator.
//
// The child holds each node's certificate, so every renewal is still made as the node itself
// (system:node:<name>), judged by the Node authorizer and NodeRestriction as before. It exits when its
// parent goes (the IPC channel closes); one that dies while the parent lives is started again with
// every node it was renewing for.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LogFields, Logger, LogLevel } from '../../shared/observability/logger.js';
import type { NodeCertificate } from './tls-bootstrap.js';

export const LEASE_RENEWER_CONFIG_ENV = 'LEASE_RENEWER_CONFIG';

export interface LeaseRenewerConfig {
  /** The API server's address and CA, as the simulator's own node connections reach it. */
  server: string;
  caPem: string;
  leaseIntervalMs: number;
  /** Renewals in flight at once. */
  concurrency: number;
}

export interface NodeLease {
  nodeUid: string;
  certificate: NodeCertificate;
  /** Whether the Lease is known to exist (a renewal then starts with a patch). */
  leaseExists: boolean;
}

/** What the simulator tells the renewer. */
export type RenewerCommand =
  ({ type: 'add'; nodeName: string } & NodeLease) | { type: 'remove'; nodeName: string } | { type: 'counts' };

/** What the renewer tells the simulator. */
export type RenewerReport =
  | { type: 'ready' }
  | { type: 'renewed'; nodeName: string }
  | { type: 'counts'; counts: Record<string, number> }
  | { type: 'log'; level: LogLevel; message: string; fields: LogFields };

export interface LeaseRenewer {
  /** Starts renewing the node's Lease at once, then every interval. */
  add(nodeName: string): void;
  remove(nodeName: string): void;
  /** The renewer's requests by label, as of its last report (every few seconds). */
  counts(): Record<string, number>;
  stop(): Promise<void>;
}

export interface LeaseRenewerOptions extends LeaseRenewerConfig {
  log: Logger;
  /** After each renewal that succeeded. */
  onRenewed(nodeName: string): void;
  /**
   * The node's Lease as the simulator knows it now, or undefined when it no longer runs a kubelet; read
   * when a node is added and again for every node when a dead child is started again.
   */
  leaseOf(nodeName: string): NodeLease | undefined;
}

const entry = fileURLToPath(new URL('./lease-renewer-process.ts', import.meta.url));
const countsEveryMs = 2_000;

export async function startLeaseRenewer(options: LeaseRenewerOptions): Promise<LeaseRenewer> {
  const { log, onRenewed, leaseOf, ...config } = options;
  /** The nodes renewed for: the Leases themselves are the simulator's (leaseOf). */
  const nodes = new Set<string>();
  let counts: Record<string, number> = {};
  let child: ChildProcess | undefined;
  let stopping = false;

  const send = (command: RenewerCommand): void => {
    if (child?.connected) child.send(command);
  };

  const sendAdd = (nodeName: string): void => {
    const lease = leaseOf(nodeName);
    if (lease) send({ type: 'add', nodeName, ...lease });
    else nodes.delete(nodeName);
  };

  const spawnChild = async (): Promise<void> => {
    const started = fork(entry, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, [LEASE_RENEWER_CONFIG_ENV]: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    let ready: () => void = () => undefined;
    started.on('message', (report: RenewerReport) => {
      switch (report.type) {
        case 'ready':
          return ready();
        case 'renewed':
          return onRenewed(report.nodeName);
        case 'counts':
          counts = report.counts;
          return;
        case 'log':
          return log[report.level](report.message, report.fields);
      }
    });
    await new Promise<void>((resolve, reject) => {
      const failed = (code: number | null) =>
        reject(new Error(`the Lease renewer exited (${String(code)}) before it was ready`));
      started.once('exit', failed);
      ready = () => {
        started.off('exit', failed);
        resolve();
      };
    });
    child = started;
    started.once('exit', (code, signal) => {
      if (stopping) return;
      log.error('the Lease renewer exited; starting it again', { code, signal, nodes: nodes.size });
      child = undefined;
      void spawnChild()
        .then(() => {
          for (const nodeName of [...nodes]) sendAdd(nodeName);
        })
        .catch((error: unknown) => log.error('the Lease renewer could not be started again', { error }));
    });
  };

  await spawnChild();
  const countsTimer = setInterval(() => send({ type: 'counts' }), countsEveryMs);
  countsTimer.unref();

  return {
    add(nodeName) {
      nodes.add(nodeName);
      sendAdd(nodeName);
    },
    remove(nodeName) {
      if (!nodes.delete(nodeName)) return;
      send({ type: 'remove', nodeName });
    },
    counts: () => ({ ...counts }),
    async stop() {
      stopping = true;
      clearInterval(countsTimer);
      const current = child;
      child = undefined;
      if (!current || current.exitCode !== null || current.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      // Closing the channel is the child's signal to finish the renewals in flight and exit.
      current.disconnect();
      await gone;
    },
  };
}
