// A minimal JSON client for the Kubernetes API over keep-alive HTTPS agents.
//
// Why not the generated @kubernetes/client-node APIs for the simulator's writes: client-node 2.x builds
// a new connection pool (and re-reads the kubeconfig's certificate files) for every request, so each
// Lease renewal would pay a TLS handshake with client-certificate authentication. A few hundred nodes
// renewing every 10 s is tens of requests per second; pooled connections keep that cheap (the admin's
// one pool here, each node's own in node-connections.ts). client-node still parses the kubeconfig and
// runs the informers.
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class KubeRequestError extends Error {
  constructor(
    /** HTTP status; named `code` so shared/kube/errors.ts (isNotFound, isConflict) understands it. */
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeRequestError';
  }
}

export type ContentType =
  | 'application/json'
  | 'application/merge-patch+json'
  | 'application/strategic-merge-patch+json'
  | 'application/json-patch+json';

/** One JSON request; `label` names it in the counts (e.g. "renew lease"). */
export type KubeRequest = <T>(
  label: string,
  method: string,
  path: string,
  body?: unknown,
  contentType?: ContentType,
) => Promise<T>;

export interface KubeRest {
  request: KubeRequest;
  /** Requests made so far, by label. */
  counts(): Record<string, number>;
  close(): void;
}

/**
 * Where requests go and as whom: a keep-alive agent, and the TLS options each request adds to it (a
 * client certificate, when one agent serves several identities: it pools connections per certificate).
 */
export interface Connection {
  base: URL;
  agent: Agent;
  tls: Pick<RequestOptions, 'ca' | 'cert' | 'key'>;
  headers: Record<string, string>;
  /** Shared by every connection of one simulator, so its stats count them all. */
  counts: Record<string, number>;
}

const requestTimeoutMs = 30_000;

/** The admin kubeconfig's identity over one pool of at most `maxSockets` connections. */
export async function kubeRest(
  config: KubeConfig,
  maxSockets: number,
  counts: Record<string, number> = {},
): Promise<KubeRest> {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const tls: RequestOptions = {};
  await config.applyToHTTPSOptions(tls);
  const agent = new Agent({
    keepAlive: true,
    maxSockets,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
    ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
  });
  const headers = Object.fromEntries(
    Object.entries(tls.headers ?? {}).map(([name, value]) => [name, String(value)]),
  );
  const request = requester({ base: new URL(cluster.server), agent, tls: {}, headers, counts });
  return { request, counts: () => ({ ...counts }), close: () => agent.destroy() };
}

export function requester(connection: Connection): KubeRequest {
  const { base, agent, tls, headers, counts } = connection;
  return <T>(
    label: string,
    method: string,
    path: string,
    body?: unknown,
    contentType: ContentType = 'application/json',
  ): Promise<T> => {
    counts[label] = (counts[label] ?? 0) + 1;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      const req = httpsRequest(
        new URL(path, base),
        {
          method,
          agent,
          ...tls,
          timeout: requestTimeoutMs,
          headers: {
            ...headers,
            accept: 'application/json',
            ...(payload !== undefined
              ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        jsonResponse<T>(method, path, resolve, reject),
      );
      req.on('timeout', () =>
        req.destroy(new Error(`${method} ${path}: no answer in ${requestTimeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
}

/** The response callback of a JSON request: the parsed body on 2xx, a KubeRequestError otherwise. */
export function jsonResponse<T>(
  method: string,
  path: string,
  resolve: (value: T) => void,
  reject: (error: Error) => void,
): (res: IncomingMessage) => void {
  return (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolve((text === '' ? undefined : JSON.parse(text)) as T);
        return;
      }
      reject(new KubeRequestError(status, `${method} ${path}: ${status} ${statusMessage(text)}`));
    });
  };
}

function statusMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      'message' in parsed &&
      typeof parsed.message === 'string'
    ) {
      return parsed.message;
    }
  } catch {
    // Not a Status object: report the raw text.
  }
  return text.slice(0, 300);
}
