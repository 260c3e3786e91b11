// kubelet's TLS bootstrap, as the simulated node does it: authenticate with the bootstrap token from
// its AKSNodeConfig (user system:bootstrap:<id>), send a CertificateSigningRequest for
// system:node:<name> to the kubernetes.io/kube-apiserver-client-kubelet signer, wait until the real
// kube-controller-manager approved (csrapproving) and signed (csrsigning) it, and from then on act with
// that certificate, so the API server's Node authorizer and NodeRestriction admission judge the node's
// own writes. The key and CSR come from the openssl CLI (Node's crypto cannot write a PKCS#10 request),
// through the dev CA's one openssl invocation. A node adopted after the simulator's own restart gets its
// certificate again from the admin (reissueNodeCertificate), as a kubelet would read it back from disk.
import { request as httpsRequest } from 'node:https';
import { keyAndCertificateRequest } from '../tls/dev-ca.js';
import { isConflict } from '../../shared/kube/errors.js';
import { jsonResponse, type KubeRequest } from './kube-rest.js';

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

export interface NodeCertificate {
  certPem: string;
  keyPem: string;
}

const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** kubelet's key and request: a P-256 key, system:node:<name> in group system:nodes. */
async function nodeCertificateRequest(nodeName: string): Promise<{ keyPem: string; csr: object }> {
  const { keyPem, csrPem } = await keyAndCertificateRequest(`/O=system:nodes/CN=system:node:${nodeName}`);
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'node-csr-' },
    spec: {
      request: Buffer.from(csrPem).toString('base64'),
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
    },
  };
  return { keyPem, csr };
}

/** The signed certificate of CSR `name`, once kube-controller-manager signed it. */
async function signedCertificate(
  read: (path: string) => Promise<CsrJson>,
  name: string,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const csr = await read(`${CSR_PATH}/${name}`);
    const denied = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (denied) throw new Error(`CSR ${name} ${denied.type}: ${denied.message ?? ''}`);
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    if (Date.now() > deadline) throw new Error(`CSR ${name} was not approved and signed in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

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
): Promise<NodeCertificate> {
  const credential = { token: bootstrapToken };
  const { keyPem, csr } = await nodeCertificateRequest(nodeName);
  const created = await requestAs<CsrJson>(endpoint, credential, 'POST', CSR_PATH, csr);
  const read = (path: string) => requestAs<CsrJson>(endpoint, credential, 'GET', path);
  return { certPem: await signedCertificate(read, created.metadata?.name ?? '', timeoutMs), keyPem };
}

/**
 * The certificate of a node this simulator adopts after a restart of its own. A real kubelet keeps its
 * client certificate in /var/lib/kubelet/pki and uses it again when it restarts; the simulator keeps
 * none across its restarts, and the node's bootstrap token is gone by then (registration deletes it).
 * So the admin, standing in for that file, requests the same certificate and approves it: the node acts
 * as system:node:<name> again, under the same Node authorizer and NodeRestriction admission.
 */
export async function reissueNodeCertificate(
  admin: KubeRequest,
  nodeName: string,
  timeoutMs: number,
): Promise<NodeCertificate> {
  const { keyPem, csr } = await nodeCertificateRequest(nodeName);
  const label = 'reissue node certificate';
  const created = await admin<CsrJson>(label, 'POST', CSR_PATH, csr);
  const name = created.metadata?.name ?? '';
  const read = (path: string) => admin<CsrJson>(label, 'GET', path);
  // kube-controller-manager's approver may approve it first (the admin may request node client
  // certificates): then there is nothing to add, and a stale write (409) is read again.
  for (;;) {
    const current = await read(`${CSR_PATH}/${name}`);
    if ((current.status?.conditions ?? []).length > 0) break;
    const approved = {
      type: 'Approved',
      status: 'True',
      reason: 'KubeletCertificateOnDisk',
      message: `the kubelet simulator restarted; ${nodeName} keeps its identity`,
    };
    try {
      await admin(label, 'PUT', `${CSR_PATH}/${name}/approval`, {
        ...current,
        status: { ...current.status, conditions: [approved] },
      });
      break;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  return { certPem: await signedCertificate(read, name, timeoutMs), keyPem };
}
