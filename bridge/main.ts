// Entry point of the in-cluster event bridge: reads the environment, starts the bridge, and shuts it
// down gracefully on SIGTERM / SIGINT. Run with `npx tsx bridge/main.ts` (or the built JavaScript).
import { createLogger } from '../shared/observability/logger.js';
import { startBridge } from './bridge.js';
import type { BridgeConfig } from './config.js';
import { BridgeConfigError, bridgeUsage, loadBridgeConfig } from './config.js';

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(bridgeUsage() + '\n');
    return 0;
  }
  const unknown = argv.filter((argument) => argument !== '--help' && argument !== '-h');
  if (unknown.length > 0) {
    process.stderr.write(`unknown arguments: ${unknown.join(' ')}\n\n${bridgeUsage()}\n`);
    return 2;
  }

  let config: BridgeConfig;
  try {
    config = loadBridgeConfig(process.env);
  } catch (error) {
    if (error instanceof BridgeConfigError) {
      process.stderr.write(`${error.message}\n\nRun with --help for the list of variables.\n`);
      return 2;
    }
    throw error;
  }

  const logger = createLogger({
    component: 'event-bridge',
    minLevel: config.logLevel,
    fields: { cluster: config.clusterName },
  });
  const bridge = await startBridge({
    queue: config.queue,
    kubernetes: config.kubernetes,
    source: config.source,
    healthPort: config.healthPort,
    resyncSeconds: config.resyncSeconds,
    podResyncSeconds: config.podResyncSeconds,
    bufferCapacity: config.bufferCapacity,
    sendConcurrency: config.sendConcurrency,
    shutdownFlushSeconds: config.shutdownFlushSeconds,
    logger,
  });

  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info('shutting down', { signal });
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await bridge.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    createLogger({ component: 'event-bridge' }).error('event bridge failed', { error });
    process.exitCode = 1;
  },
);
