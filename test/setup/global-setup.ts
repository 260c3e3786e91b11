// Starts what integration and end-to-end tests share: one real control plane (with the project's CRDs)
// one Azurite (queues and tables), and a development CA that the ARM emulators sign their certificates with. The CA goes into
// NODE_EXTRA_CA_CERTS before the test workers start, because Node reads it only at process start and the
// real Azure SDK has no other way to trust a private CA. The Function App and the bridge reach the API
// server as the identities we ship (local/stack/identities.ts); the admin kubeconfig is for test set-up
// and assertions only.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startAzurite } from '../../local/azurite/launcher.js';
import { provisionShippedIdentities } from '../../local/stack/identities.js';
import { ensureDevCa } from '../../local/tls/dev-ca.js';
import { setupControlPlane } from './control-plane.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin (system:masters): test set-up and assertions only. */
    kubeconfigPath: string;
    /** The Function App's user, bound to exactly the roles of infra/k8s/functions. */
    functionsKubeconfigPath: string;
    functionsUser: string;
    /** The event bridge's ServiceAccount, with the role of infra/k8s/bridge. */
    bridgeKubeconfigPath: string;
    devCaCertPath: string;
    devCaKeyPath: string;
    azuriteConnectionString: string;
  }
}

const cacheDirectory = fileURLToPath(new URL('../../.cache/', import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => console.log(`[global-setup] ${line}`);
  mkdirSync(cacheDirectory, { recursive: true });

  const ca = await ensureDevCa(`${cacheDirectory}dev-ca`);
  process.env.NODE_EXTRA_CA_CERTS = ca.certPath;
  project.provide('devCaCertPath', ca.certPath);
  project.provide('devCaKeyPath', ca.keyPath);

  // Azurite starts beside the control plane's build and start; on a loaded machine it takes well over 30 s.
  const [controlPlane, azurite] = await Promise.all([
    setupControlPlane(log),
    startAzurite({ startTimeoutMs: 120_000 }),
  ]);
  project.provide('azuriteConnectionString', azurite.connectionString);
  log(`azurite ready (queue ${azurite.queueEndpoint}, table ${azurite.tableEndpoint})`);
  project.provide('kubeconfigPath', controlPlane.kubeconfigPath);
  const identities = await provisionShippedIdentities(
    controlPlane,
    `${controlPlane.workDir}/identities`,
  ).catch(async (error: unknown) => {
    await Promise.all([controlPlane.stop(), azurite.stop()]);
    throw error;
  });
  project.provide('functionsKubeconfigPath', identities.functions.kubeconfigPath);
  project.provide('functionsUser', identities.functions.user);
  project.provide('bridgeKubeconfigPath', identities.bridge.kubeconfigPath);
  log(`identities: functions as ${identities.functions.user}, bridge as ${identities.bridge.user}`);
  log(`control plane ready at ${controlPlane.server} (kubeconfig ${controlPlane.kubeconfigPath})`);

  return async () => {
    await Promise.all([controlPlane.stop(), azurite.stop()]);
  };
}
