import { describe, expect, it } from 'vitest';
import { BridgeConfigError, bridgeUsage, loadBridgeConfig } from '../../bridge/config.js';

const azurite =
  'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;';

const minimal = {
  CLUSTER_NAME: 'prod-westeurope',
  BRIDGE_QUEUE_NAME: 'nodeclaim-events',
  BRIDGE_QUEUE_SERVICE_URL: 'https://account.queue.core.windows.net/',
  KUBERNETES_SERVICE_HOST: '10.0.0.1',
};

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadBridgeConfig(env);
  } catch (error) {
    if (error instanceof BridgeConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a BridgeConfigError');
}

describe('loadBridgeConfig', () => {
  it('fills in defaults for an in-cluster bridge that uses workload identity', () => {
    expect(loadBridgeConfig(minimal)).toEqual({
      clusterName: 'prod-westeurope',
      queue: {
        mode: 'serviceUrl',
        serviceUrl: 'https://account.queue.core.windows.net',
        queueName: 'nodeclaim-events',
      },
      kubernetes: { mode: 'inCluster' },
      source: '/clusters/prod-westeurope/event-bridge',
      healthPort: 8080,
      resyncSeconds: 300,
      podResyncSeconds: 10,
      bufferCapacity: 10_000,
      sendConcurrency: 8,
      shutdownFlushSeconds: 20,
      logLevel: 'info',
    });
  });

  it('reads a connection string, a kubeconfig and every tunable', () => {
    const config = loadBridgeConfig({
      CLUSTER_NAME: 'local',
      BRIDGE_QUEUE_NAME: 'events',
      BRIDGE_STORAGE_CONNECTION_STRING: azurite,
      KUBECONFIG: '/tmp/kubeconfig',
      BRIDGE_HEALTH_PORT: '0',
      BRIDGE_RESYNC_SECONDS: '30',
      BRIDGE_SOURCE: 'https://example.com/bridge',
      BRIDGE_BUFFER_CAPACITY: '500',
      BRIDGE_SEND_CONCURRENCY: '2',
      BRIDGE_SHUTDOWN_FLUSH_SECONDS: '5',
      BRIDGE_LOG_LEVEL: 'debug',
    });
    expect(config.queue).toEqual({
      mode: 'connectionString',
      connectionString: azurite,
      queueName: 'events',
    });
    expect(config.kubernetes).toEqual({ mode: 'kubeconfig', kubeconfigPath: '/tmp/kubeconfig' });
    expect(config).toMatchObject({
      healthPort: 0,
      resyncSeconds: 30,
      source: 'https://example.com/bridge',
      bufferCapacity: 500,
      sendConcurrency: 2,
      shutdownFlushSeconds: 5,
      logLevel: 'debug',
    });
  });

  it('names every missing variable at once', () => {
    const problems = problemsOf({});
    expect(problems.join('\n')).toMatch(/CLUSTER_NAME/);
    expect(problems.join('\n')).toMatch(/BRIDGE_QUEUE_NAME/);
    expect(problems.join('\n')).toMatch(/BRIDGE_QUEUE_SERVICE_URL.*BRIDGE_STORAGE_CONNECTION_STRING/);
    expect(problems.join('\n')).toMatch(/KUBECONFIG/);
    expect(problems).toHaveLength(4);
  });

  it.each([
    ['BRIDGE_QUEUE_NAME', 'Events_Queue'],
    ['BRIDGE_QUEUE_NAME', 'ab'],
    ['BRIDGE_QUEUE_NAME', 'a--b'],
    ['BRIDGE_QUEUE_NAME', 'events-'],
    ['BRIDGE_QUEUE_SERVICE_URL', 'not a url'],
    ['BRIDGE_QUEUE_SERVICE_URL', 'ftp://account'],
    ['BRIDGE_HEALTH_PORT', '70000'],
    ['BRIDGE_HEALTH_PORT', '80a'],
    ['BRIDGE_RESYNC_SECONDS', '1'],
    ['BRIDGE_RESYNC_SECONDS', '-5'],
    ['BRIDGE_BUFFER_CAPACITY', '0'],
    ['BRIDGE_SEND_CONCURRENCY', '1000'],
    ['BRIDGE_SOURCE', 'has spaces'],
    ['BRIDGE_LOG_LEVEL', 'verbose'],
    ['CLUSTER_NAME', '-bad-'],
  ])('rejects %s=%j naming the variable', (name, value) => {
    const problems = problemsOf({ ...minimal, [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
  });

  it('rejects both queue targets at once, and a connection string that is not one', () => {
    expect(problemsOf({ ...minimal, BRIDGE_STORAGE_CONNECTION_STRING: azurite })[0]).toMatch(
      /only one of BRIDGE_STORAGE_CONNECTION_STRING .* and BRIDGE_QUEUE_SERVICE_URL/,
    );
    const { BRIDGE_QUEUE_SERVICE_URL: _unused, ...withoutUrl } = minimal;
    expect(problemsOf({ ...withoutUrl, BRIDGE_STORAGE_CONNECTION_STRING: 'hello' })[0]).toContain(
      'BRIDGE_STORAGE_CONNECTION_STRING',
    );
  });

  it('the usage text lists every variable', () => {
    const usage = bridgeUsage();
    for (const name of [
      'CLUSTER_NAME',
      'BRIDGE_QUEUE_NAME',
      'BRIDGE_QUEUE_SERVICE_URL',
      'BRIDGE_STORAGE_CONNECTION_STRING',
      'KUBECONFIG',
      'BRIDGE_HEALTH_PORT',
      'BRIDGE_RESYNC_SECONDS',
      'BRIDGE_SOURCE',
      'BRIDGE_BUFFER_CAPACITY',
      'BRIDGE_SEND_CONCURRENCY',
      'BRIDGE_SHUTDOWN_FLUSH_SECONDS',
      'BRIDGE_LOG_LEVEL',
    ]) {
      expect(usage).toContain(name);
    }
  });
});
