import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Paths of the PEM files one local control plane uses. */
export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
  admin: ClientIdentity;
  scheduler: ClientIdentity;
  controllerManager: ClientIdentity;
  /** Separate trust root for the aggregation layer's request-header authentication, as in kubeadm. */
  frontProxyCaCert: string;
  frontProxyClient: ClientIdentity;
}

export interface ClientIdentity {
  cert: string;
  key: string;
}

/** The CN the API server accepts request headers from (its own proxy client). */
export const frontProxyClientName = 'front-proxy-client';

interface CertificateAuthority {
  cert: string;
  key: string;
}

/**
 * Keys come from Node's crypto (ECDSA P-256: fast to generate, accepted everywhere Kubernetes takes keys);
 * Node cannot issue X.509 certificates, so the openssl CLI signs them.
 */
export async function createControlPlanePki(directory: string): Promise<ControlPlanePki> {
  const file = (name: string): string => path.join(directory, name);

  const authority = async (name: string, commonName: string): Promise<CertificateAuthority> => {
    const key = await writePrivateKey(file(`${name}.key`));
    const cert = file(`${name}.crt`);
    await issueCertificate({
      key,
      out: cert,
      configPath: file(`${name}.cnf`),
      subject: { CN: commonName },
      extensions: [
        'basicConstraints = critical, CA:TRUE',
        'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
        'subjectKeyIdentifier = hash',
      ],
      validDays: 3650,
    });
    return { cert, key };
  };

  const leaf = (
    issuer: CertificateAuthority,
    name: string,
    subject: Subject,
    extensions: string[],
  ): Promise<ClientIdentity> => issueLeaf(directory, issuer, name, subject, extensions);

  const ca = await authority('ca', 'nodeclaim-azure-local-ca');
  const apiserver = await leaf(ca, 'kube-apiserver', { CN: 'kube-apiserver' }, [
    'extendedKeyUsage = serverAuth',
    // The in-cluster names and the first service IP are what clients inside a cluster would use.
    'subjectAltName = IP:127.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, ' +
      'DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:10.0.0.1',
  ]);
  const clientAuth = ['extendedKeyUsage = clientAuth'];
  const admin = await leaf(ca, 'admin', { O: 'system:masters', CN: 'nodeclaim-azure-admin' }, clientAuth);
  const scheduler = await leaf(ca, 'kube-scheduler', { CN: 'system:kube-scheduler' }, clientAuth);
  const controllerManager = await leaf(
    ca,
    'kube-controller-manager',
    { CN: 'system:kube-controller-manager' },
    clientAuth,
  );
  const frontProxyCa = await authority('front-proxy-ca', 'nodeclaim-azure-local-front-proxy-ca');
  const frontProxyClient = await leaf(
    frontProxyCa,
    'front-proxy-client',
    { CN: frontProxyClientName },
    clientAuth,
  );

  const serviceAccountKey = await writePrivateKey(file('service-account.key'), file('service-account.pub'));

  return {
    caCert: ca.cert,
    caKey: ca.key,
    apiserverCert: apiserver.cert,
    apiserverKey: apiserver.key,
    serviceAccountKey,
    serviceAccountPublicKey: file('service-account.pub'),
    admin,
    scheduler,
    controllerManager,
    frontProxyCaCert: frontProxyCa.cert,
    frontProxyClient,
  };
}

type Subject = { O?: string; CN: string };

async function issueLeaf(
  directory: string,
  issuer: CertificateAuthority,
  name: string,
  subject: Subject,
  extensions: string[],
): Promise<ClientIdentity> {
  const file = (suffix: string): string => path.join(directory, `${name}.${suffix}`);
  const key = await writePrivateKey(file('key'));
  const cert = file('crt');
  await issueCertificate({
    key,
    out: cert,
    configPath: file('cnf'),
    subject,
    extensions: [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'authorityKeyIdentifier = keyid',
      ...extensions,
    ],
    validDays: 365,
    issuer,
  });
  return { cert, key };
}

/**
 * A client certificate from the control plane's CA for a user of the given name and no group, as a
 * cluster's administrator would issue one: the API server authenticates it as that user, and RBAC alone
 * decides what it may do.
 */
export function issueClientCertificate(
  directory: string,
  ca: { cert: string; key: string },
  user: string,
): Promise<ClientIdentity> {
  return issueLeaf(directory, ca, user, { CN: user }, ['extendedKeyUsage = clientAuth']);
}

interface CertificateRequest {
  key: string;
  out: string;
  configPath: string;
  subject: Subject;
  extensions: string[];
  validDays: number;
  /** Absent for the self-signed CA. */
  issuer?: CertificateAuthority;
}

async function issueCertificate(request: CertificateRequest): Promise<void> {
  // A config of our own, so the machine's openssl.cnf defaults (e.g. CA:TRUE on every -x509) do not leak in.
  const subjectLines = [
    ...(request.subject.O === undefined ? [] : [`O = ${request.subject.O}`]),
    `CN = ${request.subject.CN}`,
  ];
  const config = [
    '[req]',
    'prompt = no',
    'distinguished_name = subject',
    '[subject]',
    ...subjectLines,
    '[extensions]',
    ...request.extensions,
    '',
  ].join('\n');
  await writeFile(request.configPath, config, { mode: 0o600 });

  const args = [
    'req',
    '-new',
    '-x509',
    '-config',
    request.configPath,
    '-extensions',
    'extensions',
    '-key',
    request.key,
    '-days',
    String(request.validDays),
    '-sha256',
    '-out',
    request.out,
  ];
  if (request.issuer) args.push('-CA', request.issuer.cert, '-CAkey', request.issuer.key);
  try {
    await execFileAsync(openssl(), args);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(
      `openssl could not issue ${request.out} (OpenSSL 3 is needed for \`req -x509 -CA\`): ${detail}`,
      { cause: error },
    );
  }
}

function openssl(): string {
  return process.env['OPENSSL'] ?? 'openssl';
}

async function writePrivateKey(keyPath: string, publicKeyPath?: string): Promise<string> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  await writeFile(keyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  if (publicKeyPath !== undefined) {
    await writeFile(publicKeyPath, publicKey.export({ type: 'spki', format: 'pem' }));
  }
  return keyPath;
}
