// A development certificate authority for the local stack's HTTPS servers (the ARM emulator).
//
// Certificates are made with the openssl CLI (/usr/bin/openssl, or OPENSSL_BIN): Node's crypto
// module can make keys but cannot issue X.509 certificates, and openssl is present wherever the
// control plane's tooling runs.
//
// Why a CA and not a self-signed server certificate: the real Azure SDK only trusts extra roots
// through NODE_EXTRA_CA_CERTS, read once when Node starts. The test setup creates one CA in a fixed
// cache directory before the workers start; every emulator instance then signs a fresh server
// certificate (new port, same trust) with that CA.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** openssl req arguments for a new, unencrypted P-256 key: the CA's and every certificate request's. */
const NEW_P256_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface PemKeyPair {
  certPem: string;
  keyPem: string;
}

export interface DevCa extends PemKeyPair {
  certPath: string;
  keyPath: string;
}

/**
 * Where the shared development CA lives unless told otherwise: outside the repository, so every
 * checkout and every test run trusts the same root. DEV_CA_DIR overrides it.
 */
export function defaultDevCaDir(): string {
  if (process.env.DEV_CA_DIR) return process.env.DEV_CA_DIR;
  const cacheRoot = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(cacheRoot, 'nodeclaim-azure-functions', 'tls');
}

const caSubject = '/CN=nodeclaim-azure-functions local development CA';
const caValidityDays = 3650;
const serverValidityDays = 365;

function opensslBinary(): string {
  return process.env.OPENSSL_BIN ?? 'openssl';
}

/** Runs openssl and returns what it printed. */
async function openssl(args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(opensslBinary(), args, { timeout: 30_000 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0] ?? ''} failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Returns the CA kept in `dir/ca/`, creating it on first use. Safe when several processes call it at
 * once: each builds its CA in a private directory and renames it into place; the loser of the rename
 * discards its own and uses the winner's, so a key and certificate never come from different runs.
 */
export async function ensureDevCa(dir: string): Promise<DevCa> {
  const caDir = join(dir, 'ca');
  const certPath = join(caDir, 'ca.crt');
  const keyPath = join(caDir, 'ca.key');

  const existing = await readPair(certPath, keyPath);
  if (existing) return { certPath, keyPath, ...existing };

  await mkdir(dir, { recursive: true });
  const staging = await mkdtemp(join(dir, 'ca-staging-'));
  try {
    await openssl([
      'req',
      '-x509',
      ...NEW_P256_KEY,
      '-keyout',
      join(staging, 'ca.key'),
      '-out',
      join(staging, 'ca.crt'),
      '-days',
      String(caValidityDays),
      '-subj',
      caSubject,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    try {
      await rename(staging, caDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }

  const created = await readPair(certPath, keyPath);
  if (!created) throw new Error(`development CA was not written to ${caDir}`);
  return { certPath, keyPath, ...created };
}

async function readPair(certPath: string, keyPath: string): Promise<PemKeyPair | undefined> {
  const certPem = await readIfPresent(certPath);
  const keyPem = await readIfPresent(keyPath);
  if (certPem === undefined || keyPem === undefined) return undefined;
  return { certPem, keyPem };
}

/**
 * A new P-256 key and a PKCS#10 certificate request for `subject` (openssl's /O=…/CN=… form), both PEM:
 * what the server certificates here and the simulated kubelet's TLS bootstrap sign.
 */
export async function keyAndCertificateRequest(subject: string): Promise<{ keyPem: string; csrPem: string }> {
  const printed = await openssl(['req', '-new', ...NEW_P256_KEY, '-keyout', '-', '-subj', subject]);
  const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/.exec(printed)?.[0];
  const csrPem = /-----BEGIN CERTIFICATE REQUEST-----[\s\S]+?-----END CERTIFICATE REQUEST-----\n/.exec(
    printed,
  )?.[0];
  if (!keyPem || !csrPem) throw new Error('openssl did not print a key and a certificate request');
  return { keyPem, csrPem };
}

/** Issues a server certificate for `hosts` (IP addresses and DNS names), signed by `ca`. */
export async function issueServerCertificate(ca: PemKeyPair, hosts: string[]): Promise<PemKeyPair> {
  if (hosts.length === 0) throw new Error('issueServerCertificate needs at least one host');
  const work = await mkdtemp(join(tmpdir(), 'dev-cert-'));
  try {
    const caCert = join(work, 'ca.crt');
    const caKey = join(work, 'ca.key');
    const csr = join(work, 'server.csr');
    const cert = join(work, 'server.crt');
    const extensions = join(work, 'server.ext');
    await writeFile(caCert, ca.certPem);
    await writeFile(caKey, ca.keyPem, { mode: 0o600 });
    const subjectAltName = hosts.map((host) => (isIP(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
    await writeFile(
      extensions,
      [
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${subjectAltName}`,
        '',
      ].join('\n'),
    );
    const request = await keyAndCertificateRequest(`/CN=${hosts[0]}`);
    await writeFile(csr, request.csrPem);
    await openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caCert,
      '-CAkey',
      caKey,
      '-set_serial',
      `0x${randomBytes(16).toString('hex')}`,
      '-days',
      String(serverValidityDays),
      '-sha256',
      '-extfile',
      extensions,
      '-out',
      cert,
    ]);
    return { certPem: await readFile(cert, 'utf8'), keyPem: request.keyPem };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A throwaway CA held only in memory (for an emulator started without a shared CA). */
export async function createEphemeralCa(): Promise<PemKeyPair> {
  const work = await mkdtemp(join(tmpdir(), 'dev-ca-'));
  try {
    const ca = await ensureDevCa(work);
    return { certPem: ca.certPem, keyPem: ca.keyPem };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
