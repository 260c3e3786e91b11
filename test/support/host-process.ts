// The Function App in a process of its own, so a test can kill it with SIGKILL at any line and start
// another on the same durable history directory, as Azure restarts a worker. Configuration comes as JSON
// in HOST_PROCESS_CONFIG; "ready" on stdout once every function is registered and listening.
import type { SweepScope } from '../../local/stack/definitions.js';
import { startFunctionApp } from '../../local/stack/function-app.js';
import { fixedTokenCredential } from '../../local/storage-front/index.js';
import { createLogger } from '../../shared/observability/logger.js';

export interface HostProcessConfig {
  appSettings: Record<string, string>;
  stateDirectory: string;
  sweepSchedule: string;
  /** The Function App identity's token at the storage front (LocalStack.functionsStorageToken), if any. */
  storageToken?: string;
  sweepScope: SweepScope;
}

const config = JSON.parse(process.env.HOST_PROCESS_CONFIG ?? '') as HostProcessConfig;
const log = createLogger({
  component: 'host-process',
  minLevel: process.env.TEST_LOGS ? 'debug' : 'warn',
  sink: (_level, line) => process.stderr.write(line + '\n'),
});
const app = await startFunctionApp({
  appSettings: config.appSettings,
  log,
  ...(config.storageToken ? { credential: fixedTokenCredential(config.storageToken) } : {}),
  sweepSchedule: config.sweepSchedule,
  sweepScope: config.sweepScope,
  host: { visibilityTimeoutMs: 500, pollIntervalMs: 50, stateDirectory: config.stateDirectory },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
