// Storage as the shipped identities reach it in Azure: with bearer tokens, through the authorizing front
// for Azurite (local/storage-front) that checks every request against the roles of infra/azure-roles.json
// and answers as Storage does. The real bridge (real informers on the real kube-apiserver, as its
// ServiceAccount) publishes with exactly "Storage Queue Data Message Sender" on its queue, and with that
// role less its one data action it logs what to grant and stays unready. Each identity is refused just
// outside what it is granted: the bridge at another queue and for reading, the Function App outside its
// account and for what none of its roles holds. The test itself uses Azurite's key for set-up and reads.
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { TableClient } from '@azure/data-tables';
import { QueueClient, QueueServiceClient } from '@azure/storage-queue';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startBridge, type BridgeHandle } from '../../bridge/index.js';
import { SEND_DATA_ACTION } from '../../bridge/queue-sink.js';
import {
  localStorageAccountId,
  shippedStoragePrincipal,
} from '../../local/stack/storage-role-assignments.js';
import {
  azuriteFromConnectionString,
  fixedTokenCredential,
  startStorageFront,
  type StorageFront,
} from '../../local/storage-front/index.js';
import { createEphemeralCa } from '../../local/tls/dev-ca.js';
import { queueClientOptions, storageTlsOptions } from '../../shared/azure/storage-tls.js';
import { isBridgeProbeEvent, parseObjectChangeEvent } from '../../shared/events/cloud-event.js';
import { NodeClaimResource } from '../../shared/kube/crd-names.js';
import { createLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';
import { useAzurite } from '../support/azurite.js';
import { devCa } from '../support/dev-ca.js';
import { nextHostEvent, useLocalHosts } from '../support/local-hosts.js';

const suffix = randomBytes(3).toString('hex');
const queueName = `front-events-${suffix}`;
const OTHER_ACCOUNT = 'otheraccount';
const fastBackoff = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0.1 };
const oneTry = { retryOptions: { maxTries: 1 } };

const azuriteConnectionString = useAzurite();
const createHost = useLocalHosts(azuriteConnectionString);
let front: StorageFront;
let caCertPem: string;
let accountName: string;
const createdNodeClaims: string[] = [];
let custom: CustomObjectsApi;
let bridgeKubeConfig: KubeConfig;

const where = () => ({ accountId: localStorageAccountId(accountName), eventsQueue: queueName });

beforeAll(async () => {
  const azurite = azuriteFromConnectionString(azuriteConnectionString());
  accountName = azurite.accountName;
  const ca = await devCa();
  caCertPem = ca.certPem;
  front = await startStorageFront({
    azurite,
    ca,
    accounts: {
      [accountName]: localStorageAccountId(accountName),
      // Served by the front but not by Azurite: a request allowed there would fail at Azurite, so a
      // refusal here is the front's.
      [OTHER_ACCOUNT]: localStorageAccountId(OTHER_ACCOUNT),
    },
  });
  // Set-up as infrastructure does it: the events queue exists before the bridge starts.
  await new QueueClient(azuriteConnectionString(), queueName).createIfNotExists();
  const admin = new KubeConfig();
  admin.loadFromFile(inject('kubeconfigPath'));
  custom = admin.makeApiClient(CustomObjectsApi);
  bridgeKubeConfig = new KubeConfig();
  bridgeKubeConfig.loadFromFile(inject('bridgeKubeconfigPath'));
});

afterAll(async () => {
  for (const name of createdNodeClaims)
    await custom.deleteClusterCustomObject({ ...NodeClaimResource, name }).catch(() => undefined);
  await new QueueClient(azuriteConnectionString(), queueName).deleteIfExists();
  await front?.stop();
});

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every message in the queue, read and deleted with the account key (the test's own access). */
async function drain(name: string): Promise<string[]> {
  const queue = new QueueClient(azuriteConnectionString(), name);
  const texts: string[] = [];
  for (;;) {
    const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: 32 });
    if (receivedMessageItems.length === 0) return texts;
    for (const message of receivedMessageItems) {
      texts.push(message.messageText);
      await queue.deleteMessage(message.messageId, message.popReceipt);
    }
  }
}

function startTestBridge(credential: ReturnType<StorageFront['register']>, logLines: string[]) {
  return startBridge({
    queue: { mode: 'serviceUrl', serviceUrl: front.queueEndpoint(), queueName },
    queueCredential: credential,
    queueCaCertPem: caCertPem,
    kubernetes: { mode: 'kubeConfig', kubeConfig: bridgeKubeConfig },
    source: '/clusters/storage-front/event-bridge',
    healthPort: 0,
    healthHost: '127.0.0.1',
    resyncSeconds: 3_600,
    // A refused bridge cannot drain its outbox; stopping need not wait for it.
    shutdownFlushSeconds: 1,
    watchBackoff: fastBackoff,
    queueBackoff: fastBackoff,
    logger: createLogger({ component: 'event-bridge', sink: (_level, line) => logLines.push(line) }),
  });
}

describe('the bridge with exactly "Storage Queue Data Message Sender" on its queue', () => {
  let bridge: BridgeHandle;
  const logLines: string[] = [];

  beforeAll(async () => {
    const principal = shippedStoragePrincipal('bridge', where());
    expect(principal.assignments.map((a) => a.roleName)).toEqual(['Storage Queue Data Message Sender']);
    bridge = await startTestBridge(front.register(principal), logLines);
  });
  afterAll(async () => {
    await bridge?.stop();
  });

  it('turns ready by sending a probe, and publishes a NodeClaim change', async () => {
    await waitUntil(() => bridge.ready(), 'the bridge to be ready');
    const readyz = await fetch(`http://127.0.0.1:${bridge.healthPort}/readyz`);
    expect(readyz.status).toBe(200);

    const name = `front-nodeclaim-${suffix}`;
    createdNodeClaims.push(name);
    await custom.createClusterCustomObject({
      ...NodeClaimResource,
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        },
      },
    });
    const seen: string[] = [];
    await waitUntil(async () => {
      seen.push(...(await drain(queueName)));
      return seen.some(
        (text) => !isBridgeProbeEvent(text) && parseObjectChangeEvent(text).data.name === name,
      );
    }, 'the NodeClaim event in the queue');
    expect(seen.filter((text) => isBridgeProbeEvent(text)).length).toBeGreaterThan(0);

    const bridgeCalls = front.tally().filter((entry) => entry.principal === 'bridge');
    expect(bridgeCalls.map((entry) => `${entry.operation} ${entry.status}`)).toEqual(['Put Message allowed']);
  });
});

describe('the bridge with that role less its one data action', () => {
  it('logs the missing data action and what to grant, and /readyz stays unready', async () => {
    const logLines: string[] = [];
    const lacking = shippedStoragePrincipal('bridge', where(), {
      role: 'Storage Queue Data Message Sender',
      permission: SEND_DATA_ACTION,
    });
    const bridge = await startTestBridge(
      front.register({ ...lacking, name: 'bridge-lacking-send' }),
      logLines,
    );
    try {
      await waitUntil(
        () => logLines.some((line) => line.includes(SEND_DATA_ACTION)),
        'the log line naming the data action',
      );
      const line = logLines.find((l) => l.includes(SEND_DATA_ACTION)) ?? '';
      expect(JSON.parse(line)).toMatchObject({
        level: 'error',
        message: expect.stringContaining(`queue ${queueName} (403 AuthorizationPermissionMismatch)`),
        missingDataAction: SEND_DATA_ACTION,
      });
      expect(line).toContain('Storage Queue Data Message Sender');
      // Informers sync; only the queue keeps it unready.
      await waitUntil(() => bridge.stats().informers.NodeClaim.synced, 'informers to sync');
      const readyz = await fetch(`http://127.0.0.1:${bridge.healthPort}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toMatchObject({ queueReachable: false });
      expect(bridge.ready()).toBe(false);
    } finally {
      await bridge.stop();
    }
  });
});

describe('narrowness: each identity refused just outside its grants', () => {
  const refusal = { statusCode: 403, code: 'AuthorizationPermissionMismatch' };

  it('the bridge: another queue, the poison queue, reading or peeking its own, its metadata, a table', async () => {
    const credential = front.register(shippedStoragePrincipal('bridge', where()));
    const queue = (name: string) =>
      new QueueClient(`${front.queueEndpoint()}/${name}`, credential, queueClientOptions(oneTry, caCertPem));
    await new QueueClient(azuriteConnectionString(), `${queueName}-other`).createIfNotExists();
    try {
      await expect(queue(`${queueName}-other`).sendMessage('x')).rejects.toMatchObject(refusal);
      await expect(queue(`${queueName}-poison`).sendMessage('x')).rejects.toMatchObject(refusal);
      await expect(queue(queueName).receiveMessages()).rejects.toMatchObject(refusal);
      await expect(queue(queueName).peekMessages()).rejects.toMatchObject(refusal);
      await expect(queue(queueName).getProperties()).rejects.toMatchObject(refusal);
      await expect(queue(`${queueName}-new`).create()).rejects.toMatchObject(refusal);
      const table = new TableClient(
        front.tableEndpoint(),
        'frontnarrow',
        credential,
        storageTlsOptions(caCertPem),
      );
      await expect(table.createTable()).rejects.toMatchObject({ statusCode: 403 });
      // Inside: its own queue.
      await expect(queue(queueName).sendMessage('{}')).resolves.toBeDefined();
    } finally {
      await new QueueClient(azuriteConnectionString(), `${queueName}-other`).deleteIfExists();
      await drain(queueName);
    }
  });

  it('the Function App: another account, and what none of its roles holds (ACLs, service properties)', async () => {
    const credential = front.register(shippedStoragePrincipal('functionApp', where()));
    const inOther = new QueueClient(
      `${front.queueEndpoint(OTHER_ACCOUNT)}/${queueName}`,
      credential,
      queueClientOptions(oneTry, caCertPem),
    );
    await expect(inOther.sendMessage('x')).rejects.toMatchObject(refusal);
    await expect(inOther.receiveMessages()).rejects.toMatchObject(refusal);
    const otherTable = new TableClient(
      front.tableEndpoint(OTHER_ACCOUNT),
      'offerings',
      credential,
      storageTlsOptions(caCertPem),
    );
    await expect(otherTable.createTable()).rejects.toMatchObject({ statusCode: 403 });

    const own = new QueueClient(
      `${front.queueEndpoint()}/${queueName}`,
      credential,
      queueClientOptions(oneTry, caCertPem),
    );
    await expect(own.setAccessPolicy()).rejects.toMatchObject(refusal);
    await expect(own.getAccessPolicy()).rejects.toMatchObject(refusal);
    const service = new QueueServiceClient(
      front.queueEndpoint(),
      credential,
      queueClientOptions(oneTry, caCertPem),
    );
    await expect(service.setProperties({})).rejects.toMatchObject(refusal);
    // Inside: the table the app keeps its failed offerings in, through the same client code as in Azure.
    const table = new TableClient(
      front.tableEndpoint(),
      `frontoffers${suffix}`,
      credential,
      storageTlsOptions(caCertPem),
    );
    await table.createTable();
    await table.upsertEntity({ partitionKey: 'blocks', rowKey: 'r', reason: 'test' }, 'Replace');
    const rows: string[] = [];
    for await (const row of table.listEntities()) rows.push(row.rowKey ?? '');
    expect(rows).toEqual(['r']);
    await table.deleteEntity('blocks', 'r');
    await table.deleteTable();
  });

  it('no token, or one the front did not issue: 401 as Storage answers', async () => {
    const unknown = new QueueClient(
      `${front.queueEndpoint()}/${queueName}`,
      fixedTokenCredential('not-issued-by-the-front'),
      queueClientOptions(oneTry, caCertPem),
    );
    await expect(unknown.sendMessage('x')).rejects.toMatchObject({
      statusCode: 401,
      code: 'InvalidAuthenticationInfo',
    });
    const anonymous = await fetch(`${front.queueEndpoint()}/${queueName}/messages`, {
      method: 'POST',
      body: '<QueueMessage/>',
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-ms-error-code')).toBe('NoAuthenticationInformation');
    expect(anonymous.headers.get('www-authenticate')).toContain('resource_id=https://storage.azure.com');
  });
});

describe('the in-process host as the Function App identity', () => {
  it('receives, deletes, retries and poisons through the front', async () => {
    const name = `front-host-${suffix}`;
    const credential = front.register(shippedStoragePrincipal('functionApp', where()));
    const queueService = new QueueServiceClient(
      front.queueEndpoint(),
      credential,
      queueClientOptions({}, caCertPem),
    );
    const handled: unknown[] = [];
    const definitions: FunctionDefinition[] = [
      {
        kind: 'queue',
        name: 'ThroughFront',
        queueName: name,
        connection: 'AzureWebJobsStorage',
        handler: async (body) => {
          handled.push(body);
          if (body === 'fail') throw new Error('always fails');
        },
      },
    ];
    const host = createHost({
      definitions,
      queueService,
      maxDequeueCount: 2,
      log: createLogger({ component: 'test', sink: () => undefined }),
    });
    await host.start();
    const poisoned = nextHostEvent(host, (event) => event.type === 'message.poisoned');
    const sender = queueService.getQueueClient(name);
    await sender.sendMessage('{"ok":true}');
    await sender.sendMessage('fail');
    await poisoned;
    await host.waitForIdle();
    expect(handled).toContainEqual({ ok: true });
    expect(handled.filter((body) => body === 'fail')).toHaveLength(2);
    const operations = new Set(
      front
        .tally()
        .filter((entry) => entry.principal === 'functionApp' && entry.status === 'allowed')
        .map((e) => e.operation),
    );
    for (const operation of [
      'Create Queue',
      'Get Messages',
      'Delete Message',
      'Update Message',
      'Put Message',
    ])
      expect(operations, operation).toContain(operation);
    await new QueueClient(azuriteConnectionString(), name).deleteIfExists();
    await new QueueClient(azuriteConnectionString(), `${name}-poison`).deleteIfExists();
  });
});

describe('STORAGE_CA_CERT is what makes a client trust the front', () => {
  it('a front signed by a CA only the option names: trusted with it, refused without', async () => {
    const azurite = azuriteFromConnectionString(azuriteConnectionString());
    const ownCa = await createEphemeralCa();
    const ownFront = await startStorageFront({
      azurite,
      ca: ownCa,
      accounts: { [accountName]: localStorageAccountId(accountName) },
    });
    try {
      const credential = ownFront.register(shippedStoragePrincipal('bridge', where()));
      const url = `${ownFront.queueEndpoint()}/${queueName}`;
      await expect(
        new QueueClient(url, credential, queueClientOptions(oneTry, ownCa.certPem)).sendMessage('{}'),
      ).resolves.toBeDefined();
      await expect(
        new QueueClient(url, credential, queueClientOptions(oneTry, undefined)).sendMessage('{}'),
      ).rejects.toThrow(/certificate/i);
    } finally {
      await ownFront.stop();
      await drain(queueName);
    }
  });
});
