// Test harness for the launch path: the real control plane (from the global setup), a real Azurite, an
// ARM emulator reached through the real @azure/arm-compute client, and the function app's own definitions
// running in the in-process host. Nothing is mocked; only Azure authentication is not emulated (the
// emulator accepts any token, so the credential returns a fixed one).
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { TableClient } from '@azure/data-tables';
import type { TokenCredential } from '@azure/identity';
import { QueueClient } from '@azure/storage-queue';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { definitions } from '../../functions/index.js';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { createLocalHost, type LocalHost } from '../../local/host/index.js';
import { loadSettings, setSettings, type Settings } from '../../shared/config/settings.js';
import { toCloudEvent, type ObjectChange } from '../../shared/events/cloud-event.js';
import {
  createDependencies,
  setDependencies,
  type LifecycleDependencies,
} from '../../shared/lifecycle/dependencies.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { createLogger, type LogLevel } from '../../shared/observability/logger.js';

export const fixedTokenCredential: TokenCredential = {
  getToken: () =>
    Promise.resolve({ token: 'emulator-accepts-any-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

export interface LaunchStack {
  settings: Settings;
  deps: LifecycleDependencies;
  emulator: ArmEmulator;
  host: LocalHost;
  queueName: string;
  /** Publishes what the event bridge would publish for an object change. */
  publish(
    change: Omit<ObjectChange, 'changeType'> & Partial<Pick<ObjectChange, 'changeType'>>,
  ): Promise<void>;
  /** Puts a raw message body on the events queue. */
  sendRaw(body: string): Promise<void>;
  logs: { level: LogLevel; record: Record<string, unknown> }[];
  /** Forgets every offering marked unavailable, so test cases do not starve each other of capacity. */
  clearUnavailableOfferings(): Promise<void>;
  stop(): Promise<void>;
}

export interface LaunchStackOptions {
  env?: Record<string, string>;
  latencies?: { createMs?: number; deleteMs?: number; retryAfterSeconds?: number };
  maxDequeueCount?: number;
}

export async function startLaunchStack(options: LaunchStackOptions = {}): Promise<LaunchStack> {
  const ca = {
    certPem: await readFile(inject('devCaCertPath'), 'utf8'),
    keyPem: await readFile(inject('devCaKeyPath'), 'utf8'),
  };
  const emulator = await startArmEmulator({
    ca,
    latencies: { createMs: 1_500, deleteMs: 300, retryAfterSeconds: 1, ...options.latencies },
  });
  const queueName = `events-${randomUUID().slice(0, 8)}`;
  const env: Record<string, string> = {
    CLUSTER_NAME: 'test',
    AZURE_SUBSCRIPTION_ID: '00000000-0000-0000-0000-000000000001',
    AZURE_RESOURCE_GROUP: 'MC_test_nodes',
    AZURE_LOCATION: 'westus2',
    ARM_ENDPOINT: emulator.url,
    ARM_CA_CERT: emulator.caCertPem,
    AZURE_SUBNET_ID:
      '/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes',
    NODE_SSH_PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKeyForTheEmulatorOnly test',
    KUBECONFIG: inject('kubeconfigPath'),
    BOOTSTRAP_API_SERVER_URL: 'https://127.0.0.1:6443',
    BOOTSTRAP_CA_CERT: ca.certPem,
    BOOTSTRAP_TOKEN: 'abcdef.0123456789abcdef',
    AzureWebJobsStorage: inject('azuriteConnectionString'),
    EVENTS_QUEUE_NAME: queueName,
    UNAVAILABLE_OFFERINGS_TABLE: `offerings${randomUUID().replace(/-/g, '').slice(0, 10)}`,
    LAUNCH_POLL_INTERVAL_SECONDS: '0.5',
    LAUNCH_MAX_POLL_INTERVAL_SECONDS: '1',
    ...options.env,
  };
  const settings = loadSettings(env);
  setSettings(settings);
  const logs: LaunchStack['logs'] = [];
  const log = createLogger({
    component: 'test',
    minLevel: 'debug',
    sink: (level, line) => {
      logs.push({ level, record: JSON.parse(line) as Record<string, unknown> });
      if (process.env.TEST_LOGS) process.stderr.write(line + '\n');
    },
  });
  const deps = createDependencies(settings, { credential: fixedTokenCredential, log });
  setDependencies(deps);
  const host = createLocalHost({
    definitions,
    storageConnectionString: settings.storage.connectionString ?? '',
    appSettings: env,
    maxDequeueCount: options.maxDequeueCount ?? 3,
    visibilityTimeoutMs: 500,
    pollIntervalMs: 50,
    log,
  });
  await host.start();
  const queue = new QueueClient(settings.storage.connectionString ?? '', queueName);
  await queue.createIfNotExists();

  return {
    settings,
    deps,
    emulator,
    host,
    queueName,
    logs,
    async publish(change) {
      const event = toCloudEvent(
        { changeType: 'ADDED', ...change },
        { id: randomUUID(), source: '/clusters/test/event-bridge', time: new Date() },
      );
      await queue.sendMessage(JSON.stringify(event));
    },
    async clearUnavailableOfferings() {
      const table = TableClient.fromConnectionString(
        settings.storage.connectionString ?? '',
        settings.unavailableOfferingsTable,
        { allowInsecureConnection: true },
      );
      try {
        for await (const row of table.listEntities()) {
          await table.deleteEntity(row.partitionKey ?? '', row.rowKey ?? '');
        }
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      }
    },
    async sendRaw(body) {
      await queue.sendMessage(body);
    },
    async stop() {
      await host.stop();
      await emulator.stop();
      setDependencies(undefined);
      setSettings(undefined);
    },
  };
}

/** Polls `probe` until it returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Records every version of one NodeClaim seen through a watch, so a state that lasts milliseconds is seen. */
export async function watchNodeClaim(
  kubeconfigPath: string,
  name: string,
): Promise<{ versions: NodeClaim[]; stop(): void }> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const versions: NodeClaim[] = [];
  const request = await new Watch(config).watch(
    '/apis/karpenter.sh/v1/nodeclaims',
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, object: NodeClaim) => versions.push(object),
    () => undefined,
  );
  return { versions, stop: () => request.abort() };
}
