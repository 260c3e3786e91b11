// The Function App in a process of its own, as host-process.ts runs it, that also tells its parent what
// became of its orchestrations: a test that kills one host with SIGKILL and starts another on the same
// durable history must still see every workflow that ended Failed, in whichever process it ended. Each
// orchestration event of the host is one line "host-event <json>" on stdout; on Linux a write to a pipe
// is synchronous, so a kill loses no line written before it. The host resumes saved orchestrations while
// it starts, before a listener can be added to it, so a workflow that fails then (a history that no
// longer replays) is told from the host's own log line instead. "ready" once every function is registered.
import { startFunctionApp } from '../../local/stack/function-app.js';
import { fixedTokenCredential } from '../../local/storage-front/index.js';
import type { HostEvent } from '../../local/host/index.js';
import { createLogger } from '../../shared/observability/logger.js';
import { HOST_EVENT_PREFIX } from './child-host.js';
import type { HostProcessConfig } from './host-process.js';

const report = (event: HostEvent): void => {
  process.stdout.write(`${HOST_EVENT_PREFIX}${JSON.stringify(event)}\n`);
};

/** What the orchestration runtime logs as an instance fails (local/host/orchestration-runtime.ts). */
interface FailedLogRecord {
  message: 'orchestration failed';
  instanceId: string;
  orchestration: string;
  error?: unknown;
}

function failedLogRecord(line: string): FailedLogRecord | undefined {
  if (!line.includes('"orchestration failed"')) return undefined;
  const record = JSON.parse(line) as Partial<FailedLogRecord>;
  return record.message === 'orchestration failed' &&
    typeof record.instanceId === 'string' &&
    typeof record.orchestration === 'string'
    ? (record as FailedLogRecord)
    : undefined;
}

const config = JSON.parse(process.env.HOST_PROCESS_CONFIG ?? '') as HostProcessConfig;
let listening = false;
const log = createLogger({
  component: 'host-process',
  minLevel: process.env.TEST_LOGS ? 'debug' : 'warn',
  sink: (_level, line) => {
    process.stderr.write(line + '\n');
    const failed = listening ? undefined : failedLogRecord(line);
    if (failed) {
      report({
        type: 'orchestration.failed',
        instanceId: failed.instanceId,
        name: failed.orchestration,
        error: JSON.stringify(failed.error ?? null),
      });
    }
  },
});
const app = await startFunctionApp({
  appSettings: config.appSettings,
  log,
  ...(config.storageToken ? { credential: fixedTokenCredential(config.storageToken) } : {}),
  sweepSchedule: config.sweepSchedule,
  sweepScope: config.sweepScope,
  host: { visibilityTimeoutMs: 500, pollIntervalMs: 50, stateDirectory: config.stateDirectory },
});
app.host.on((event) => {
  if (event.type.startsWith('orchestration.')) report(event);
});
listening = true;
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void app.stop().then(() => process.exit(0));
});
