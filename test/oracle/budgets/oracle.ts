// Builds the budget oracle (this folder's Go module: upstream Karpenter's budget functions) once per
// change of its sources into the cache beside the control plane, outside the repository, and runs it
// over a batch of cases. Go and the module proxy are needed only for the first build.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findGo } from '../../../local/control-plane/build.js';
import type { Budget } from '../../../shared/models/karpenter.js';

const moduleDirectory = path.dirname(fileURLToPath(import.meta.url));
const sources = ['go.mod', 'go.sum', 'main.go'];

export interface OracleCase {
  /** Undefined: the NodePool as the API server stores it without budgets (the CRD's default). */
  budgets?: Budget[];
  reason: string;
  numNodes: number;
  now: string;
}

export interface OracleResult {
  allowed: number;
  error?: string;
}

export async function ensureBudgetOracle(): Promise<string> {
  const digest = createHash('sha256');
  for (const file of sources) digest.update(await readFile(path.join(moduleDirectory, file)));
  const cacheRoot = process.env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache');
  const directory = path.join(cacheRoot, 'nodeclaim-azure', 'budget-oracle');
  const binary = path.join(directory, `budget-oracle-${digest.digest('hex').slice(0, 16)}`);
  if (await exists(binary)) return binary;
  await mkdir(directory, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  await promisify(execFile)(await findGo(), ['build', '-mod=readonly', '-o', partial, '.'], {
    cwd: moduleDirectory,
    env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    maxBuffer: 16 * 1024 * 1024,
  });
  await rename(partial, binary);
  return binary;
}

export function runBudgetOracle(binary: string, cases: readonly OracleCase[]): Promise<OracleResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the budget oracle exited with ${code}`));
      const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
      resolve(lines.map((line) => JSON.parse(line) as OracleResult));
    });
    child.stdin.end(cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
  });
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
