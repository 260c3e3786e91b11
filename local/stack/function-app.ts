// The Function App running in the in-process host: settings read and validated from app settings exactly
// as in Azure, the lifecycle dependencies built for the emulators, and the app's own function definitions.
import type { TokenCredential } from '@azure/identity';
import { QueueClient, QueueServiceClient } from '@azure/storage-queue';
import { queueClientOptions } from '../../shared/azure/storage-tls.js';
import { appDefinitions } from '../../functions/definitions.js';
import { loadSettings, type Settings } from '../../shared/config/settings.js';
import { createDependencies, type AzureDependencies } from '../../shared/lifecycle/dependencies.js';
import type { Logger } from '../../shared/observability/logger.js';
import { createLocalHost, type LocalHost, type LocalHostOptions } from '../host/index.js';
import { localDefinitions, type LocalDefinitionOptions } from './definitions.js';

/** The ARM emulator accepts any bearer token; only authentication is not emulated. */
export const fixedTokenCredential: TokenCredential = {
  getToken: () =>
    Promise.resolve({ token: 'emulator-accepts-any-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

export interface FunctionAppOptions extends LocalDefinitionOptions {
  /** App settings (the environment the Function App would get); see localAppSettings. */
  appSettings: Record<string, string>;
  log: Logger;
  credential?: TokenCredential;
  host?: Pick<
    LocalHostOptions,
    'maxDequeueCount' | 'visibilityTimeoutMs' | 'pollIntervalMs' | 'clock' | 'stateDirectory' | 'http'
  >;
}

export interface RunningFunctionApp {
  settings: Settings;
  deps: AzureDependencies;
  host: LocalHost;
  /** The events queue the bridge publishes to and the queue function reads. */
  queue: QueueClient;
  stop(): Promise<void>;
}

/**
 * Loads the settings as Azure would, builds the dependencies for the emulators and hands them to the app's
 * functions (nothing process-wide, so several apps may share a process), creates the events queue, and
 * starts the host.
 */
export async function startFunctionApp(options: FunctionAppOptions): Promise<RunningFunctionApp> {
  const settings = loadSettings(options.appSettings);
  const credential = options.credential ?? fixedTokenCredential;
  const deps = createDependencies(settings, { credential, log: options.log });
  const service = queueServiceOf(settings, credential);
  const queue = service.getQueueClient(settings.queues.events);
  await queue.createIfNotExists();
  const host = createLocalHost({
    definitions: localDefinitions(
      appDefinitions(() => deps),
      () => deps,
      options,
    ),
    queueService: service,
    appSettings: options.appSettings,
    log: options.log,
    ...options.host,
  });
  try {
    await host.start();
  } catch (error) {
    deps.cluster.stop();
    throw error;
  }
  return {
    settings,
    deps,
    host,
    queue,
    async stop() {
      await host.stop();
      deps.cluster.stop();
    },
  };
}

/**
 * The queue service the Functions host reads the triggers' queues from, as it connects in Azure: with
 * the connection string when AzureWebJobsStorage is one, otherwise as the app's identity at
 * AzureWebJobsStorage__queueServiceUri (by default the account's public endpoint).
 */
function queueServiceOf(settings: Settings, credential: TokenCredential): QueueServiceClient {
  const { connectionString, accountName, queueServiceUri, caCertPem } = settings.storage;
  if (connectionString) return QueueServiceClient.fromConnectionString(connectionString);
  return new QueueServiceClient(
    queueServiceUri ?? `https://${accountName ?? ''}.queue.core.windows.net`,
    credential,
    queueClientOptions({}, caCertPem),
  );
}
