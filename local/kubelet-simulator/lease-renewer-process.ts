// The process that renews the simulated kubelets' Leases (started by lease-renewer.ts, which says why).
// It knows each node by the certificate the simulator hands it and renews as that node, on the same
// heartbeat loop the simulator uses in-process; it exits when the simulator closes the channel.
import { createLogger } from '../../shared/observability/logger.js';
import { HeartbeatLoop } from './heartbeat-loop.js';
import { KubeletApi } from './kubelet-api.js';
import {
  LEASE_RENEWER_CONFIG_ENV,
  type LeaseRenewerConfig,
  type RenewerCommand,
  type RenewerReport,
} from './lease-renewer.js';
import { nodeConnections } from './node-connections.js';

const report = (message: RenewerReport): void => {
  if (process.connected) process.send?.(message);
};

const config = JSON.parse(process.env[LEASE_RENEWER_CONFIG_ENV] ?? 'null') as LeaseRenewerConfig | null;
if (!config)
  throw new Error(`${LEASE_RENEWER_CONFIG_ENV} is not set: start this process with startLeaseRenewer`);

const log = createLogger({
  component: 'lease-renewer',
  sink: (level, line) => {
    const { message, time: _time, level: _level, ...fields } = JSON.parse(line) as Record<string, unknown>;
    report({ type: 'log', level, message: String(message), fields });
  },
});
const counts: Record<string, number> = {};
const connections = nodeConnections({ server: new URL(config.server), caPem: config.caPem }, counts);
const nodes = new Map<string, { api: KubeletApi; nodeUid: string; leaseExists: boolean }>();

const loop = new HeartbeatLoop({
  leaseIntervalMs: config.leaseIntervalMs,
  // Status reports stay with the simulator: this loop only renews.
  statusReportIntervalMs: Number.POSITIVE_INFINITY,
  concurrency: config.concurrency,
  log,
  renewLease: async (nodeName) => {
    const node = nodes.get(nodeName);
    if (!node) return;
    await node.api.renewLease(nodeName, node.nodeUid, node.leaseExists);
    node.leaseExists = true;
    report({ type: 'renewed', nodeName });
  },
  reportStatus: () => Promise.resolve(),
});

process.on('message', (command: RenewerCommand) => {
  switch (command.type) {
    case 'add': {
      const { nodeName, nodeUid, certificate, leaseExists } = command;
      nodes.set(nodeName, { api: new KubeletApi(connections.as(certificate)), nodeUid, leaseExists });
      loop.add(nodeName, Date.now());
      return;
    }
    case 'remove':
      nodes.delete(command.nodeName);
      loop.remove(command.nodeName);
      return;
    case 'counts':
      report({ type: 'counts', counts: { ...counts } });
      return;
  }
});

process.once('disconnect', () => {
  void loop.stop().finally(() => {
    connections.close();
    process.exit(0);
  });
});

report({ type: 'ready' });
