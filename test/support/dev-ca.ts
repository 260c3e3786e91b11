// The development CA the global setup made (the ARM emulator's and the node bootstrap's TLS root), read
// from the paths it provides to every test file.
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import type { PemKeyPair } from '../../local/tls/dev-ca.js';

export async function devCa(): Promise<PemKeyPair> {
  return {
    certPem: await readFile(inject('devCaCertPath'), 'utf8'),
    keyPem: await readFile(inject('devCaKeyPath'), 'utf8'),
  };
}
