// What the cluster admin sets up once so that nodes can join with bootstrap tokens: the bindings of
// infra/k8s/functions/node-bootstrap.yaml (node bootstrapping and CSR auto-approval for the token group).
// The simulator applies the same manifest at start, as the operator does on AKS, and finds the API
// server's address and CA in the admin kubeconfig.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { isAlreadyExists } from '../../shared/kube/errors.js';
import type { KubeRest } from './kube-rest.js';
import type { ApiEndpoint } from './tls-bootstrap.js';

const MANIFEST = join(import.meta.dirname, '..', '..', 'infra', 'k8s', 'functions', 'node-bootstrap.yaml');

export async function ensureNodeBootstrapBindings(rest: KubeRest): Promise<void> {
  const documents = parseAllDocuments(await readFile(MANIFEST, 'utf8')).map((d) => d.toJS() as unknown);
  for (const binding of documents) {
    try {
      await rest.request(
        'apply node bootstrap RBAC',
        'POST',
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        binding,
      );
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
}

export async function apiEndpoint(config: KubeConfig): Promise<ApiEndpoint> {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const tls: RequestOptions = {};
  await config.applyToHTTPSOptions(tls);
  if (tls.ca === undefined) throw new Error('kubeconfig has no cluster CA');
  return { server: new URL(cluster.server), caPem: String(tls.ca) };
}
