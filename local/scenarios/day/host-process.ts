// The Function App in a process of its own, for the day: the weather kills it with SIGKILL at whatever
// line it is on and starts another on the same durable history directory, as Azure restarts a dead
// worker. The configuration comes as JSON in DAY_HOST_CONFIG; "ready" on stdout once every function is
// registered and listening; the app's log lines (JSON) go to stderr for the parent to keep. Every second
// (and on SIGTERM) the host's count of Durable work is written to a file of this process's own, which the
// parent merges over the processes of the day; a SIGKILL loses at most the last second's count.
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SweepScope } from '../../stack/definitions.js';
import { startFunctionApp } from '../../stack/function-app.js';
import { fixedTokenCredential } from '../../storage-front/index.js';
import { createLogger } from '../../../shared/observability/logger.js';

export interface DayHostConfig {
  appSettings: Record<string, string>;
  stateDirectory: string;
  sweepSchedule: string;
  /** The Function App identity's token at the storage front (LocalStack.functionsStorageToken), if any. */
  storageToken?: string;
  sweepScope?: SweepScope;
  /** Where each process writes its Durable work snapshot (durable-work-<pid>.json). */
  durableWorkDirectory?: string;
}

const config = JSON.parse(process.env.DAY_HOST_CONFIG ?? '') as DayHostConfig;
const log = createLogger({
  component: 'function-host',
  minLevel: 'info',
  sink: (_level, line) => process.stderr.write(line + '\n'),
});
const app = await startFunctionApp({
  appSettings: config.appSettings,
  log,
  ...(config.storageToken ? { credential: fixedTokenCredential(config.storageToken) } : {}),
  sweepSchedule: config.sweepSchedule,
  ...(config.sweepScope ? { sweepScope: config.sweepScope } : {}),
  host: { visibilityTimeoutMs: 1_000, pollIntervalMs: 50, stateDirectory: config.stateDirectory },
});
const { durableWorkDirectory } = config;
const writeDurableWork = async (): Promise<void> => {
  if (durableWorkDirectory === undefined) return;
  const target = join(durableWorkDirectory, `durable-work-${process.pid}.json`);
  await writeFile(`${target}.tmp`, JSON.stringify(app.host.durableWork({ instances: true })), 'utf8');
  await rename(`${target}.tmp`, target);
};
let writing: Promise<void> = Promise.resolve();
const snapshots = setInterval(() => {
  writing = writing.then(writeDurableWork).catch(() => undefined);
}, 1_000);
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  clearInterval(snapshots);
  void app
    .stop()
    .then(() => writing)
    .then(writeDurableWork)
    .finally(() => process.exit(0));
});
