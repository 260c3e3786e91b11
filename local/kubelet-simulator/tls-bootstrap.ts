// kubelet's TLS bootstrap, as the simulated node does it: authenticate with the bootstrap token from
// its AKSNodeConfig (user system:bootstrap:<id>), send a CertificateSigningRequest for
// system:node:<name> to the kubernetes.io/kube-apiserver-client-kubelet signer, wait until the real
// kube-controller-manager approved (csrapproving) and signed (csrsigning) it, and from then on act with
// that certificate, so the API server's Node authorizer and NodeRestriction admission judge the node's
// own writes. The key and CSR come from the openssl CLI (Node's crypto cannot write a PKCS#10 request),
// through the dev CA's one openssl invocation.
import { request as httpsRequest } from 'node:https';
import { keyAndCertificateRequest } from '../tls/dev-ca.js';
import { jsonResponse } from './kube-rest.js';

export type Credential = { token: string } | { certPem: string; keyPem: string };

export interface ApiEndpoint {
  server: URL;
  caPem: string;
}

const requestTimeoutMs = 15_000;

/** One JSON request as `credential` (a few per node: no pooling needed). */
export function requestAs<T>(
  endpoint: ApiEndpoint,
  credential: Credential,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<T>((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, endpoint.server),
      {
        method,
        ca: endpoint.caPem,
        timeout: requestTimeoutMs,
        ...('certPem' in credential ? { cert: credential.certPem, key: credential.keyPem } : {}),
        headers: {
          accept: 'application/json',
          ...('token' in credential ? { authorization: `Bearer ${credential.token}` } : {}),
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      jsonResponse<T>(method, path, resolve, reject),
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${requestTimeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

interface CsrJson {
  metadata?: { name?: string };
  status?: { certificate?: string; conditions?: Array<{ type?: string; message?: string }> };
}

const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/**
 * The node's client certificate, obtained with its bootstrap token. Rejects with a KubeRequestError 401
 * when the token is unknown, expired or deleted, and with an Error when the CSR is denied or not signed
 * within `timeoutMs`.
 */
export async function tlsBootstrap(
  endpoint: ApiEndpoint,
  bootstrapToken: string,
  nodeName: string,
  timeoutMs: number,
): Promise<{ certPem: string; keyPem: string }> {
  const credential = { token: bootstrapToken };
  // kubelet's key and request: a P-256 key, system:node:<name> in group system:nodes.
  const { keyPem, csrPem } = await keyAndCertificateRequest(`/O=system:nodes/CN=system:node:${nodeName}`);
  const created = await requestAs<CsrJson>(endpoint, credential, 'POST', CSR_PATH, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'node-csr-' },
    spec: {
      request: Buffer.from(csrPem).toString('base64'),
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
    },
  });
  const name = created.metadata?.name ?? '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const csr = await requestAs<CsrJson>(endpoint, credential, 'GET', `${CSR_PATH}/${name}`);
    const denied = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (denied) throw new Error(`CSR ${name} ${denied.type}: ${denied.message ?? ''}`);
    if (csr.status?.certificate) {
      return { certPem: Buffer.from(csr.status.certificate, 'base64').toString('utf8'), keyPem };
    }
    if (Date.now() > deadline) throw new Error(`CSR ${name} was not approved and signed in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
