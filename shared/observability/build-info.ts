// `karpenter_build_info`: the version that is running, as Karpenter labels it. The version is the app
// package's (read once from the package.json the deployment package carries, wherever the compiled file
// sits below it); goversion and goarch name the runtime, here Node.js; commit is BUILD_COMMIT when the
// build sets it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MetricLabels } from './metrics.js';

const PACKAGE_NAME = 'nodeclaim-azure-functions';

let cached: MetricLabels | undefined;

function packageVersion(): string {
  for (let directory = dirname(fileURLToPath(import.meta.url)); ; directory = dirname(directory)) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === PACKAGE_NAME) return parsed.version ?? 'unspecified';
    }
    if (dirname(directory) === directory) return 'unspecified';
  }
}

/** BUILD_COMMIT, the commit the deployment says it runs; empty when unset. */
export function buildCommit(env: NodeJS.ProcessEnv = process.env): string {
  return env['BUILD_COMMIT']?.trim() ?? '';
}

export function buildInfoLabels(env: NodeJS.ProcessEnv = process.env): MetricLabels {
  cached ??= {
    version: packageVersion(),
    goversion: process.version,
    goarch: process.arch,
    commit: buildCommit(env),
  };
  return cached;
}
