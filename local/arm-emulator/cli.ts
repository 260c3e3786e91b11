// Runs the ARM emulator on its own: `npx tsx local/arm-emulator/cli.ts --port 8443`.

import { parseArgs } from 'node:util';
import { createLogger } from '../../shared/observability/logger.js';
import { defaultDevCaDir, ensureDevCa } from '../tls/dev-ca.js';
import { startArmEmulator } from './server.js';

const usage = `Usage: npx tsx local/arm-emulator/cli.ts [options]

An HTTPS emulator of Azure Resource Manager for Microsoft.Compute virtual machines,
resource SKUs and async operations, with injectable faults (see local/arm-emulator/README.md).

Options:
  --port N               port to listen on (default 8443; 0 picks a free one)
  --host H               address to bind (default 127.0.0.1)
  --ca-dir DIR           where the development CA is kept (default ${defaultDevCaDir()})
  --create-ms N          VM creation latency in ms (default 4000)
  --delete-ms N          VM deletion latency in ms (default 2000)
  --retry-after N        Retry-After seconds on running operations (default 1)
  --throttle-scale X     multiply Compute's throttling limits by X (default 1)
  --verbose              log every request
  -h, --help             show this help

Point a client at the printed URL and trust the printed CA, for example
  NODE_EXTRA_CA_CERTS=<ca path> node app.js
`;

function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new Error(`--${name} must be a non-negative number, got '${value}'`);
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'ca-dir': { type: 'string' },
      'create-ms': { type: 'string' },
      'delete-ms': { type: 'string' },
      'retry-after': { type: 'string' },
      'throttle-scale': { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const ca = await ensureDevCa(values['ca-dir'] ?? defaultDevCaDir());
  const latencies = Object.fromEntries(
    [
      ['createMs', numberOption(values['create-ms'], 'create-ms')],
      ['deleteMs', numberOption(values['delete-ms'], 'delete-ms')],
      ['retryAfterSeconds', numberOption(values['retry-after'], 'retry-after')],
    ].filter(([, v]) => v !== undefined),
  );
  const emulator = await startArmEmulator({
    port: numberOption(values.port, 'port') ?? 8443,
    host: values.host ?? '127.0.0.1',
    ca,
    latencies,
    throttling: { scale: numberOption(values['throttle-scale'], 'throttle-scale') ?? 1 },
    log: createLogger({ component: 'arm-emulator', minLevel: values.verbose ? 'debug' : 'info' }),
  });
  process.stdout.write(`ARM emulator: ${emulator.url}\nCA certificate: ${ca.certPath}\n`);
  process.stdout.write(
    `Admin API: ${emulator.url}/admin/requests, /admin/faults, /admin/latencies, /admin/vms\n`,
  );

  const shutdown = (): void => {
    void emulator.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
