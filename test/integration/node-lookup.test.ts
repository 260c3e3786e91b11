// Finding a NodeClaim's Nodes by providerID against the real kube-apiserver, without listing every Node:
// an Azure providerID names its VM, and the VM's Node carries that name (the computer name is the VM
// name; kubelet registers under the host name in lower case). Requests are counted on the client's
// HTTP layer, so a lookup that fell back to a whole-cluster list would show. The lookups run as the
// Function App's shipped identity; admin creates the Nodes.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeClientsFromKubeconfig, type KubeClients } from '../../shared/kube/client.js';
import { nodesWithProviderID } from '../../shared/kube/nodes.js';

const suffix = Math.random().toString(36).slice(2, 8);
const vmName = `aks-lookup-${suffix}`;
const providerID = `azure:///subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/${vmName}`;
const created: string[] = [];
let clients: KubeClients;
let appClients: KubeClients;

beforeAll(() => {
  clients = kubeClientsFromKubeconfig(inject('kubeconfigPath'));
  appClients = kubeClientsFromKubeconfig(inject('functionsKubeconfigPath'));
});

afterAll(async () => {
  for (const name of created) await clients.core.deleteNode({ name }).catch(() => undefined);
});

async function createNode(name: string, nodeProviderID: string): Promise<void> {
  created.push(name);
  await clients.core.createNode({ body: { metadata: { name }, spec: { providerID: nodeProviderID } } });
}

/** The paths of the HTTP requests `action` made. */
async function requestsOf(action: () => Promise<unknown>): Promise<string[]> {
  const paths: string[] = [];
  const onRequest = (message: unknown) => {
    const { request } = message as { request: { path: string } };
    paths.push(request.path);
  };
  subscribe('undici:request:create', onRequest);
  try {
    await action();
  } finally {
    unsubscribe('undici:request:create', onRequest);
  }
  return paths;
}

describe('nodesWithProviderID', () => {
  it('finds the Node named after the VM with one GET, before the NodeClaim knows its nodeName', async () => {
    await createNode(vmName, providerID.toLowerCase());
    let found: unknown;
    const paths = await requestsOf(async () => {
      found = await nodesWithProviderID(appClients.core, providerID);
    });
    expect(found).toMatchObject([{ metadata: { name: vmName } }]);
    expect(paths).toEqual([`/api/v1/nodes/${vmName}`]);
  });

  it('answers "no Node" for a VM that has not registered, without listing the cluster', async () => {
    const missing = providerID.replace(vmName, `${vmName}-never-joined`);
    let found: unknown;
    const paths = await requestsOf(async () => {
      found = await nodesWithProviderID(appClients.core, missing);
    });
    expect(found).toEqual([]);
    expect(paths).toEqual([`/api/v1/nodes/${vmName}-never-joined`]);
  });

  it('a known nodeName that now belongs to another VM is not taken for this one', async () => {
    const found = await nodesWithProviderID(
      appClients.core,
      providerID.replace(vmName, `${vmName}-other`),
      vmName,
    );
    expect(found).toEqual([]);
  });

  it('a providerID that names no Azure VM falls back to a list', async () => {
    const foreign = `kind://docker/kind/lookup-${suffix}`;
    await createNode(`foreign-${suffix}`, foreign);
    let found: unknown;
    const paths = await requestsOf(async () => {
      found = await nodesWithProviderID(appClients.core, foreign);
    });
    expect(found).toMatchObject([{ metadata: { name: `foreign-${suffix}` } }]);
    expect(paths.some((path) => path.startsWith('/api/v1/nodes?'))).toBe(true);
  });
});
