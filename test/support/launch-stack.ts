// Test harness for the launch path: the real control plane (from the global setup), a real Azurite, an
// ARM emulator reached through the real @azure/arm-compute client, and the function app's own definitions
// running in the in-process host. Nothing is mocked; only Azure authentication is not emulated (the
// emulator accepts any token, so the credential returns a fixed one). The app reaches the API server as
// the Function App's shipped identity; `admin` is the test's own access for set-up and assertions.
import { randomUUID } from 'node:crypto';
import { tableClientFromConnectionString } from '../../shared/azure/table-client.js';
import { KubeConfig, Watch, type CoreV1Event } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import type { LocalHost, LocalHostOptions } from '../../local/host/index.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { appAuthorization, type AzureRoleMutation } from '../../local/stack/azure-role-assignments.js';
import { startFunctionApp } from '../../local/stack/function-app.js';
import { RUN_LABEL } from '../../local/stack/local-stack.js';
import type { Settings } from '../../shared/config/settings.js';
import { toCloudEvent, type ObjectChange } from '../../shared/events/cloud-event.js';
import type { AzureDependencies } from '../../shared/lifecycle/dependencies.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { createLogger, type LogLevel } from '../../shared/observability/logger.js';
import { devCa } from './dev-ca.js';
import { adminAccess, sweepLeaseNamespace, type AdminAccess } from './identities.js';

export { fixedTokenCredential } from '../../local/stack/function-app.js';

export interface LaunchStack {
  settings: Settings;
  /** The app's dependencies: its clients act as the Function App's identity. */
  deps: AzureDependencies;
  /** Admin clients, for test set-up and assertions only. */
  admin: AdminAccess;
  emulator: ArmEmulator;
  host: LocalHost;
  queueName: string;
  /**
   * The label this stack's sweep is confined to: NodeClaims a test creates carry it, so the sweep never
   * touches other test files' NodeClaims on the shared control plane.
   */
  runLabel: { key: string; value: string };
  /** Publishes what the event bridge would publish for an object change. */
  publish(
    change: Omit<ObjectChange, 'changeType'> & Partial<Pick<ObjectChange, 'changeType'>>,
  ): Promise<void>;
  /** Messages on the events queue not yet handled (visible or being handled). */
  pendingMessages(): Promise<number>;
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
  /** An action the emulator's role assignments lack (default: the app identity's roles as shipped). */
  azureRoleWithout?: AzureRoleMutation;
  /** Where the host serves the app's HTTP functions (its loopback listener; TLS with a certificate). */
  http?: LocalHostOptions['http'];
}

export async function startLaunchStack(options: LaunchStackOptions = {}): Promise<LaunchStack> {
  const ca = await devCa();
  const emulator = await startArmEmulator({
    ca,
    latencies: { createMs: 1_500, deleteMs: 300, retryAfterSeconds: 1, ...options.latencies },
  });
  const queueName = `events-${randomUUID().slice(0, 8)}`;
  const runId = randomUUID().slice(0, 8);
  const env: Record<string, string> = {
    ...localAppSettings({
      clusterName: 'test',
      // A resource group of its own, as each cluster has in Azure: a kubelet simulator deletes the Nodes of
      // its resource group whose VM it does not know (orphans), and must never take another test file's
      // Nodes for those.
      resourceGroup: `MC_test_${runId}`,
      kubeconfigPath: inject('functionsKubeconfigPath'),
      armEndpoint: emulator.url,
      armCaCertPem: emulator.caCertPem,
      bootstrapCaCertPem: ca.certPem,
      storageConnectionString: inject('azuriteConnectionString'),
      queueName,
      unavailableOfferingsTable: `offerings${randomUUID().replace(/-/g, '').slice(0, 10)}`,
      pollIntervalSeconds: 0.5,
      maxPollIntervalSeconds: 1,
    }),
    ...options.env,
  };
  emulator.controls.setAuthorization(appAuthorization(env, options.azureRoleWithout));
  const logs: LaunchStack['logs'] = [];
  const log = createLogger({
    component: 'test',
    minLevel: 'debug',
    sink: (level, line) => {
      logs.push({ level, record: JSON.parse(line) as Record<string, unknown> });
      if (process.env.TEST_LOGS) process.stderr.write(line + '\n');
    },
  });
  const lease = await sweepLeaseNamespace(`launch-sweep-${runId}`);
  const app = await startFunctionApp({
    appSettings: env,
    log,
    sweepScope: { nodeClaimSelector: `${RUN_LABEL}=${runId}`, leaseNamespace: lease.namespace },
    host: {
      maxDequeueCount: options.maxDequeueCount ?? 3,
      visibilityTimeoutMs: 500,
      pollIntervalMs: 50,
      ...(options.http ? { http: options.http } : {}),
    },
  });
  const { settings, deps, host, queue } = app;

  return {
    settings,
    deps,
    admin: adminAccess(),
    emulator,
    host,
    queueName,
    runLabel: { key: RUN_LABEL, value: runId },
    logs,
    async publish(change) {
      const event = toCloudEvent(
        { changeType: 'ADDED', ...change },
        { id: randomUUID(), source: '/clusters/test/event-bridge', time: new Date() },
      );
      await queue.sendMessage(JSON.stringify(event));
    },
    async clearUnavailableOfferings() {
      const table = tableClientFromConnectionString(
        settings.storage.connectionString ?? '',
        settings.unavailableOfferingsTable,
      );
      try {
        for await (const row of table.listEntities()) {
          await table.deleteEntity(row.partitionKey ?? '', row.rowKey ?? '');
        }
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      }
    },
    async pendingMessages() {
      return (await queue.getProperties()).approximateMessagesCount ?? 0;
    },
    async sendRaw(body) {
      await queue.sendMessage(body);
    },
    async stop() {
      await app.stop();
      await emulator.stop();
      await lease.remove();
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

/**
 * The Events stored about a NodeClaim in `default`, waited for until there is one: the launch records its
 * Event after the condition it explains, so a test that has seen the condition may not see the Event yet.
 */
export async function eventsAboutNodeClaim(
  stack: Pick<LaunchStack, 'admin'>,
  name: string,
): Promise<CoreV1Event[]> {
  const { core } = await stack.admin.kube();
  return eventually(async () => {
    const list = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items.length > 0 ? list.items : undefined;
  }, 'an event about the NodeClaim');
}

/** Records every version of one NodeClaim seen through a watch, so a state that lasts milliseconds is seen. */
export async function watchNodeClaim(
  kubeconfigPath: string,
  name: string,
): Promise<{ versions: NodeClaim[]; seenAt: number[]; stop(): void }> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const versions: NodeClaim[] = [];
  const seenAt: number[] = [];
  const request = await new Watch(config).watch(
    '/apis/karpenter.sh/v1/nodeclaims',
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, object: NodeClaim) => {
      versions.push(object);
      seenAt.push(Date.now());
    },
    () => undefined,
  );
  return { versions, seenAt, stop: () => request.abort() };
}
