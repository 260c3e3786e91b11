// Builds the Kubernetes clients the functions use: from a kubeconfig locally, or from the API server URL,
// its CA and a Microsoft Entra token (managed identity) in Azure. Tokens are refreshed before they expire.
import type { TokenCredential } from '@azure/identity';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type RequestContext } from '@kubernetes/client-node';
import type { Settings } from '../config/settings.js';

export interface KubeClients {
  core: CoreV1Api;
  custom: CustomObjectsApi;
  config: KubeConfig;
}

/**
 * A KubeConfig whose requests share one connection pool. @kubernetes/client-node 2.0 builds a new undici
 * Agent for every request (a TCP and TLS handshake per API call, and nothing pooled); this keeps the
 * first one and hands it to every later request made through this configuration, watches included.
 * The TLS material cannot change under one KubeConfig (Entra token refreshes build a new one), so one
 * pool per configuration is right.
 */
export class PooledKubeConfig extends KubeConfig {
  #dispatcher: ReturnType<RequestContext['getDispatcher']>;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh === undefined) return;
    if (this.#dispatcher === undefined) this.#dispatcher = fresh;
    else context.setDispatcher(this.#dispatcher);
  }
}

export function kubeClientsFromConfig(config: KubeConfig): KubeClients {
  return { core: config.makeApiClient(CoreV1Api), custom: config.makeApiClient(CustomObjectsApi), config };
}

export function kubeClientsFromKubeconfig(path: string): KubeClients {
  const config = new PooledKubeConfig();
  config.loadFromFile(path);
  return kubeClientsFromConfig(config);
}

const refreshMarginMs = 5 * 60_000;

/**
 * Returns a function that yields current clients. For Entra mode it caches the clients until the token is
 * within five minutes of expiry, so callers can ask on every invocation without extra token requests.
 */
export function kubeClientProvider(
  kubernetes: Settings['kubernetes'],
  credential?: TokenCredential,
): () => Promise<KubeClients> {
  if (kubernetes.mode === 'kubeconfig') {
    const clients = kubeClientsFromKubeconfig(kubernetes.kubeconfigPath);
    return () => Promise.resolve(clients);
  }
  if (!credential) throw new Error('Entra authentication to the API server needs an Azure credential');
  let cached: { clients: KubeClients; expiresOn: number } | undefined;
  return async () => {
    if (cached && cached.expiresOn - refreshMarginMs > Date.now()) return cached.clients;
    const token = await credential.getToken(kubernetes.tokenScope);
    if (!token) throw new Error(`No Entra token for ${kubernetes.tokenScope}: check the managed identity`);
    const config = new PooledKubeConfig();
    config.loadFromOptions({
      clusters: [
        {
          name: 'aks',
          server: kubernetes.apiServerUrl,
          caData: Buffer.from(kubernetes.caCertPem).toString('base64'),
        },
      ],
      users: [{ name: 'managed-identity', token: token.token }],
      contexts: [{ name: 'aks', cluster: 'aks', user: 'managed-identity' }],
      currentContext: 'aks',
    });
    cached = { clients: kubeClientsFromConfig(config), expiresOn: token.expiresOnTimestamp };
    return cached.clients;
  };
}
