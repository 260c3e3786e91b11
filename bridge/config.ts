// The bridge's configuration, read from the environment and validated up front. Every problem is
// reported at once, each naming the variable and what it should look like.

export type QueueTarget =
  | { mode: 'connectionString'; connectionString: string; queueName: string }
  | { mode: 'serviceUrl'; serviceUrl: string; queueName: string };

export type KubernetesTarget = { mode: 'kubeconfig'; kubeconfigPath: string } | { mode: 'inCluster' };

export type BridgeLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface BridgeConfig {
  clusterName: string;
  queue: QueueTarget;
  kubernetes: KubernetesTarget;
  /** CloudEvent `source` of every message. */
  source: string;
  /** Port of /healthz and /readyz; 0 picks a free port. */
  healthPort: number;
  /** How often objects that still need work are re-announced. */
  resyncSeconds: number;
  /**
   * How often one provisionable pod is re-announced while any is pending, so the provisioning window
   * reopens as Karpenter's pod controller requeues a provisionable pod every 10 s.
   */
  podResyncSeconds: number;
  /** High-water mark of the outbox; above it the bridge stops reading watches until it drains. */
  bufferCapacity: number;
  /** Queue sends in flight at once. */
  sendConcurrency: number;
  /** How long shutdown waits for the outbox to drain. */
  shutdownFlushSeconds: number;
  logLevel: BridgeLogLevel;
}

export const BridgeEnv = {
  queueName: 'BRIDGE_QUEUE_NAME',
  connectionString: 'BRIDGE_STORAGE_CONNECTION_STRING',
  serviceUrl: 'BRIDGE_QUEUE_SERVICE_URL',
  kubeconfig: 'KUBECONFIG',
  healthPort: 'BRIDGE_HEALTH_PORT',
  resyncSeconds: 'BRIDGE_RESYNC_SECONDS',
  podResyncSeconds: 'BRIDGE_POD_RESYNC_SECONDS',
  source: 'BRIDGE_SOURCE',
  clusterName: 'CLUSTER_NAME',
  bufferCapacity: 'BRIDGE_BUFFER_CAPACITY',
  sendConcurrency: 'BRIDGE_SEND_CONCURRENCY',
  shutdownFlushSeconds: 'BRIDGE_SHUTDOWN_FLUSH_SECONDS',
  logLevel: 'BRIDGE_LOG_LEVEL',
} as const;

export const bridgeDefaults = {
  healthPort: 8080,
  resyncSeconds: 300,
  podResyncSeconds: 10,
  bufferCapacity: 10_000,
  sendConcurrency: 8,
  /** At most one provisioning signal (a pod change) per this, below half Karpenter's 1 s batch idle. */
  provisioningSignalIntervalMs: 500,
  shutdownFlushSeconds: 20,
  logLevel: 'info',
} as const;

export class BridgeConfigError extends Error {
  override readonly name = 'BridgeConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid event bridge configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

// Azure Storage queue names: 3-63 characters, lower-case letters, digits and single hyphens,
// starting and ending with a letter or digit.
const queueNamePattern = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/;
// A DNS label-like name, as AKS cluster names are.
const clusterNamePattern = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$/;
const logLevels: readonly BridgeLogLevel[] = ['debug', 'info', 'warn', 'error'];

export function loadBridgeConfig(env: Env = process.env): BridgeConfig {
  const problems: string[] = [];
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const parsed = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return parsed;
  };

  const clusterName = value(BridgeEnv.clusterName);
  if (clusterName === undefined) {
    problems.push(
      `${BridgeEnv.clusterName} must be set to the cluster's name (used in logs and the event source)`,
    );
  } else if (!clusterNamePattern.test(clusterName)) {
    problems.push(
      `${BridgeEnv.clusterName} must be 1-63 letters, digits, '-' or '_', starting and ending with a letter or digit, got ${JSON.stringify(clusterName)}`,
    );
  }

  const queueName = value(BridgeEnv.queueName);
  if (queueName === undefined) {
    problems.push(`${BridgeEnv.queueName} must be set to the Storage queue the functions read`);
  } else if (!queueNamePattern.test(queueName)) {
    problems.push(
      `${BridgeEnv.queueName} must be a Storage queue name (3-63 lower-case letters, digits and single hyphens), got ${JSON.stringify(queueName)}`,
    );
  }

  const connectionString = value(BridgeEnv.connectionString);
  const serviceUrl = value(BridgeEnv.serviceUrl);
  let queue: QueueTarget = { mode: 'connectionString', connectionString: '', queueName: queueName ?? '' };
  if (connectionString !== undefined && serviceUrl !== undefined) {
    problems.push(
      `set only one of ${BridgeEnv.connectionString} (Azurite, keys) and ${BridgeEnv.serviceUrl} (managed or workload identity)`,
    );
  } else if (connectionString !== undefined) {
    if (!/(^|;)\s*(QueueEndpoint|AccountName|UseDevelopmentStorage)\s*=/i.test(connectionString)) {
      problems.push(
        `${BridgeEnv.connectionString} must be a Storage connection string (with AccountName=... or QueueEndpoint=...)`,
      );
    }
    queue = { mode: 'connectionString', connectionString, queueName: queueName ?? '' };
  } else if (serviceUrl !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(serviceUrl);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
      problems.push(
        `${BridgeEnv.serviceUrl} must be the queue service URL, e.g. https://<account>.queue.core.windows.net, got ${JSON.stringify(serviceUrl)}`,
      );
    }
    queue = { mode: 'serviceUrl', serviceUrl: serviceUrl.replace(/\/+$/, ''), queueName: queueName ?? '' };
  } else {
    problems.push(
      `${BridgeEnv.serviceUrl} (queue service URL, used with DefaultAzureCredential) or ${BridgeEnv.connectionString} (for Azurite) must be set`,
    );
  }

  const kubeconfigPath = value(BridgeEnv.kubeconfig);
  let kubernetes: KubernetesTarget = { mode: 'inCluster' };
  if (kubeconfigPath !== undefined) {
    kubernetes = { mode: 'kubeconfig', kubeconfigPath };
  } else if (value('KUBERNETES_SERVICE_HOST') === undefined) {
    problems.push(
      `${BridgeEnv.kubeconfig} must name a kubeconfig file when the bridge does not run in a cluster (KUBERNETES_SERVICE_HOST is not set)`,
    );
  }

  const source = value(BridgeEnv.source) ?? `/clusters/${clusterName ?? 'unknown'}/event-bridge`;
  if (/\s/.test(source)) {
    problems.push(
      `${BridgeEnv.source} must be a URI reference without spaces, got ${JSON.stringify(source)}`,
    );
  }

  const logLevelRaw = value(BridgeEnv.logLevel) ?? bridgeDefaults.logLevel;
  const logLevel = logLevels.find((level) => level === logLevelRaw);
  if (logLevel === undefined) {
    problems.push(
      `${BridgeEnv.logLevel} must be one of ${logLevels.join(', ')}, got ${JSON.stringify(logLevelRaw)}`,
    );
  }

  const config: BridgeConfig = {
    clusterName: clusterName ?? '',
    queue,
    kubernetes,
    source,
    healthPort: integer(BridgeEnv.healthPort, bridgeDefaults.healthPort, 0, 65_535),
    resyncSeconds: integer(BridgeEnv.resyncSeconds, bridgeDefaults.resyncSeconds, 5, 86_400),
    podResyncSeconds: integer(BridgeEnv.podResyncSeconds, bridgeDefaults.podResyncSeconds, 1, 3_600),
    bufferCapacity: integer(BridgeEnv.bufferCapacity, bridgeDefaults.bufferCapacity, 10, 10_000_000),
    sendConcurrency: integer(BridgeEnv.sendConcurrency, bridgeDefaults.sendConcurrency, 1, 256),
    shutdownFlushSeconds: integer(
      BridgeEnv.shutdownFlushSeconds,
      bridgeDefaults.shutdownFlushSeconds,
      0,
      3_600,
    ),
    logLevel: logLevel ?? 'info',
  };
  if (problems.length > 0) throw new BridgeConfigError(problems);
  return config;
}

/** The `--help` text: every variable, what it means, and its default. */
export function bridgeUsage(): string {
  const rows: [string, string][] = [
    [BridgeEnv.clusterName, 'cluster name (required)'],
    [BridgeEnv.queueName, 'Storage queue to send to (required)'],
    [BridgeEnv.serviceUrl, 'queue service URL; authenticates with DefaultAzureCredential'],
    [BridgeEnv.connectionString, 'Storage connection string (Azurite); set exactly one of the two'],
    [BridgeEnv.kubeconfig, 'kubeconfig file; the in-cluster service account when unset'],
    [BridgeEnv.healthPort, `port for /healthz and /readyz (default ${bridgeDefaults.healthPort})`],
    [
      BridgeEnv.resyncSeconds,
      `re-announce objects that still need work (default ${bridgeDefaults.resyncSeconds})`,
    ],
    [
      BridgeEnv.podResyncSeconds,
      `re-announce one provisionable pod while any is pending (default ${bridgeDefaults.podResyncSeconds})`,
    ],
    [BridgeEnv.source, 'CloudEvent source (default /clusters/<CLUSTER_NAME>/event-bridge)'],
    [BridgeEnv.bufferCapacity, `outbox high-water mark (default ${bridgeDefaults.bufferCapacity})`],
    [BridgeEnv.sendConcurrency, `queue sends in flight (default ${bridgeDefaults.sendConcurrency})`],
    [
      BridgeEnv.shutdownFlushSeconds,
      `how long shutdown drains (default ${bridgeDefaults.shutdownFlushSeconds})`,
    ],
    [BridgeEnv.logLevel, `debug, info, warn or error (default ${bridgeDefaults.logLevel})`],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return [
    'Usage: event-bridge [--help]',
    '',
    'Watches NodeClaims, Nodes, NodePools, AKSNodeClasses and pending Pods and sends one CloudEvents 1.0 JSON message',
    'per relevant change to an Azure Storage queue. Configured through the environment:',
    '',
    ...rows.map(([name, meaning]) => `  ${name.padEnd(width)}${meaning}`),
  ].join('\n');
}
