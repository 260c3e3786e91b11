// The setting names the code actually reads, found by running it: loadSettings, the timers' schedules,
// the telemetry credentials, the build commit and the bridge's loadBridgeConfig each get an environment
// that records every name asked for. A hand list would drift from the code; this cannot. %NAME% binding
// expressions, which the Functions host resolves rather than the code, are read from host.json and the
// function definitions.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBridgeConfig } from '../../bridge/config.js';
import { loadSettings, timerSchedules } from '../../shared/config/settings.js';
import { buildCommit } from '../../shared/observability/build-info.js';
import { azureMonitorCredentials } from '../../shared/observability/metric-export.js';

const root = join(import.meta.dirname, '..', '..');

type Env = Record<string, string | undefined>;

/** An environment holding `values` that adds every name looked up in it to `seen`. */
function recordingEnv(values: Env, seen: Set<string>): Env {
  return new Proxy(values, {
    get(target, name, receiver) {
      if (typeof name === 'string') seen.add(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
}

function ignoringErrors(run: () => unknown): void {
  try {
    run();
  } catch {
    // An incomplete environment is expected: only the names asked for matter.
  }
}

/**
 * Environments that reach every branch that reads a setting: nothing set (the kubeconfig branch is not
 * taken), then the Entra API server branch with every optional value present.
 */
const functionsEnvironments: readonly Env[] = [
  {},
  {
    CLUSTER_ENDPOINT: 'https://cluster.example:443',
    BOOTSTRAP_API_SERVER_URL: 'https://cluster.example:443',
    ARM_CA_CERT: 'x',
    STORAGE_CA_CERT: 'x',
    AKS_TENANT_ID: 'x',
    EXPLAIN_AUDIENCE: 'x',
    EXPLAIN_JWKS_URI: 'x',
    VNET_GUID: 'x',
    REPAIR_POLICIES: 'Ready=False:10m',
    SPOT_TO_SPOT_CONSOLIDATION: 'true',
    AzureWebJobsStorage__accountName: 'x',
    AzureWebJobsStorage: 'x',
    AzureWebJobsStorage__queueServiceUri: 'https://q.example',
    AzureWebJobsStorage__tableServiceUri: 'https://t.example',
    APPLICATIONINSIGHTS_CONNECTION_STRING: 'InstrumentationKey=x',
  },
];

/** Names the Function App's code reads from its environment (aliases included). */
export function namesTheFunctionsCodeReads(): Set<string> {
  const seen = new Set<string>();
  for (const values of functionsEnvironments) {
    ignoringErrors(() => loadSettings(recordingEnv({ ...values }, seen)));
    ignoringErrors(() => timerSchedules(recordingEnv({ ...values }, seen)));
    ignoringErrors(() => azureMonitorCredentials(recordingEnv({ ...values }, seen)));
    ignoringErrors(() => buildCommit(recordingEnv({ ...values }, seen)));
  }
  return seen;
}

/** Quoted "%NAME%" binding expressions, which the host resolves from app settings. */
export function bindingExpressions(): Set<string> {
  const sources = [
    readFileSync(join(root, 'host.json'), 'utf8'),
    ...readdirSync(join(root, 'functions')).map((f) => readFileSync(join(root, 'functions', f), 'utf8')),
  ];
  const names = new Set<string>();
  for (const source of sources)
    for (const m of source.matchAll(/['"]%([A-Za-z_][A-Za-z0-9_]*)%['"]/g)) names.add(m[1] as string);
  return names;
}

/** Names the event bridge's code reads: every branch of loadBridgeConfig, as above. */
export function namesTheBridgeCodeReads(): Set<string> {
  const seen = new Set<string>();
  for (const values of [{}, { KUBECONFIG: '/k', BRIDGE_QUEUE_SERVICE_URL: 'https://q.example' }])
    ignoringErrors(() => loadBridgeConfig(recordingEnv({ ...values }, seen)));
  return seen;
}
