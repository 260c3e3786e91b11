// Sends the app's OpenTelemetry metrics to Application Insights (customMetrics) in Azure. The Function
// App sets APPLICATIONINSIGHTS_CONNECTION_STRING, and with local authentication disabled on the component
// APPLICATIONINSIGHTS_AUTHENTICATION_STRING="ClientId=<app identity>;Authorization=AAD": the exporter then
// authenticates with that managed identity (it holds Monitoring Metrics Publisher). Without a connection
// string (the local stack, tests) nothing is registered here; the local stack registers its own reader.
import { metrics } from '@opentelemetry/api';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import type { Logger } from './logger.js';

/**
 * Export interval: 60 s, OpenTelemetry's and the Azure Monitor distro's default. Every gauge series is a
 * billed customMetrics row each export, so 15 s cost four times as much for values the sweep refreshes
 * every 15 s anyway; what a stopping instance counted since the last export is flushed on beforeExit
 * (an instance killed outright loses up to a minute of counts). `npm run bench` measures the rows.
 */
export const EXPORT_INTERVAL_MS = 60_000;

export interface AzureMonitorCredentials {
  connectionString: string;
  /** The managed identity to authenticate with, when the component requires Entra authentication. */
  clientId?: string;
}

/** Reads the two settings; undefined when metrics are not to be exported. */
export function azureMonitorCredentials(env: NodeJS.ProcessEnv): AzureMonitorCredentials | undefined {
  const connectionString = env.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim();
  if (!connectionString) return undefined;
  const auth = Object.fromEntries(
    (env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING ?? '')
      .split(';')
      .map((part) => part.split('=').map((s) => s.trim()))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== ''),
  );
  if (auth.Authorization !== 'AAD') return { connectionString };
  return { connectionString, ...(auth.ClientId ? { clientId: auth.ClientId } : {}) };
}

/** Registers a global MeterProvider that sends every instrument through `exporter`. */
export function registerMetricExporter(
  exporter: PushMetricExporter,
  intervalMs = EXPORT_INTERVAL_MS,
): MeterProvider {
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: intervalMs })],
  });
  metrics.setGlobalMeterProvider(provider);
  return provider;
}

/**
 * In the Functions host: registers the Azure Monitor exporter if Application Insights is configured.
 * Never throws (a telemetry problem must not stop the app); returns what it did, for the log.
 */
export async function startAzureMonitorMetrics(
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<MeterProvider | undefined> {
  const credentials = azureMonitorCredentials(env);
  if (!credentials) return undefined;
  try {
    const [{ AzureMonitorMetricExporter }, { ManagedIdentityCredential }] = await Promise.all([
      import('@azure/monitor-opentelemetry-exporter'),
      import('@azure/identity'),
    ]);
    const exporter = new AzureMonitorMetricExporter({
      connectionString: credentials.connectionString,
      ...(credentials.clientId
        ? { credential: new ManagedIdentityCredential({ clientId: credentials.clientId }) }
        : {}),
    });
    const provider = registerMetricExporter(exporter);
    // A stopping instance flushes what it counted since the last export.
    process.once('beforeExit', () => void provider.forceFlush().catch(() => undefined));
    log.info('metrics export to Application Insights started', {
      entraAuthentication: Boolean(credentials.clientId),
    });
    return provider;
  } catch (error) {
    log.error('metrics export to Application Insights could not start', {
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
}
