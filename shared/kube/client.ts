// Builds the Kubernetes clients the functions use: from a kubeconfig locally, or from the API server URL,
// its CA and a Microsoft Entra token (managed identity) in Azure. Tokens are refreshed before they expire.
import type { TokenCredential } from '@azure/identity';
import {
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  KubeConfig,
  ServerConfiguration,
  type Configuration,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
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

/**
 * How long one request to the API server may take before it is abandoned (and the handler fails and is
 * retried): an API server that accepts the connection but never answers must not hold an invocation
 * until the Functions host kills it.
 */
export const DEFAULT_KUBE_REQUEST_TIMEOUT_MS = 30_000;

/** An API client like `config.makeApiClient(ApiClass)` whose every request is abandoned after `timeoutMs`. */
export function makeTimedApiClient<T>(
  config: KubeConfig,
  ApiClass: new (configuration: Configuration) => T,
  timeoutMs: number = DEFAULT_KUBE_REQUEST_TIMEOUT_MS,
): T {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('The kubeconfig has no current cluster');
  return new ApiClass(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: config },
      promiseMiddleware: [
        {
          pre: (request: RequestContext) => {
            if (!request.getSignal()) request.setSignal(AbortSignal.timeout(timeoutMs));
            return Promise.resolve(request);
          },
          post: (response: ResponseContext) => Promise.resolve(response),
        },
      ],
    }),
  );
}

export function kubeClientsFromConfig(config: KubeConfig, timeoutMs?: number): KubeClients {
  return {
    core: makeTimedApiClient(config, CoreV1Api, timeoutMs),
    custom: makeTimedApiClient(config, CustomObjectsApi, timeoutMs),
    config,
  };
}

export function kubeClientsFromKubeconfig(path: string, timeoutMs?: number): KubeClients {
  const config = new PooledKubeConfig();
  config.loadFromFile(path);
  return kubeClientsFromConfig(config, timeoutMs);
}

const refreshMarginMs = 5 * 60_000;

/**
 * Returns a function that yields current clients. For Entra mode it caches the clients until the token is
 * within five minutes of expiry, so callers can ask on every invocation without extra token requests.
 */
export function kubeClientProvider(
  kubernetes: Settings['kubernetes'],
  credential?: TokenCredential,
  timeoutMs?: number,
): () => Promise<KubeClients> {
  if (kubernetes.mode === 'kubeconfig') {
    const clients = kubeClientsFromKubeconfig(kubernetes.kubeconfigPath, timeoutMs);
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
    cached = { clients: kubeClientsFromConfig(config, timeoutMs), expiresOn: token.expiresOnTimestamp };
    return cached.clients;
  };
}
