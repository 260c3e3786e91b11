// Helm, built from its Go module (helm.sh/helm/v3 through the Go module proxy) once per version into the
// cache beside the control plane, outside the repository, as local/control-plane/build.ts builds its
// binaries: no Helm install is needed to lint, render or install the chart in CI and the tests.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findGo } from '../../local/control-plane/build.js';

/** The pinned Helm release: v3.21.4, the newest v3 approved here (v3.22.0 is served but not approved). */
export const HELM_VERSION = 'v3.21.4';

export const CHART_DIRECTORY = fileURLToPath(new URL('../../charts/nodeclaim-azure', import.meta.url));

const run = promisify(execFile);

export function helmCacheDirectory(): string {
  const cacheRoot = process.env['XDG_CACHE_HOME'] || path.join(homedir(), '.cache');
  return path.join(cacheRoot, 'nodeclaim-azure', `helm-${HELM_VERSION}`);
}

/** The path of the cached helm binary, built first if it is not there. */
export async function ensureHelm(log: (line: string) => void = () => undefined): Promise<string> {
  const directory = helmCacheDirectory();
  const binary = path.join(directory, 'helm');
  if (existsSync(binary)) return binary;
  log(`helm: building ${HELM_VERSION} from helm.sh/helm/v3 (once; cached in ${directory})`);
  await mkdir(directory, { recursive: true });
  const gobin = await mkdtemp(path.join(tmpdir(), 'helm-build-'));
  try {
    await run(
      await findGo(),
      [
        'install',
        // What Helm's own release build stamps in; without it `helm version` says only the minor.
        `-ldflags=-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
        `helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`,
      ],
      {
        env: { ...process.env, GOBIN: gobin, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    // A rename is atomic: a concurrent build's reader never sees half a binary.
    await rename(path.join(gobin, 'helm'), binary);
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
  log(`helm: ${binary}`);
  return binary;
}

/** Runs helm with `args`; resolves with stdout, rejects with stderr in the message. */
export async function runHelm(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const helm = await ensureHelm();
  try {
    const { stdout } = await run(helm, [...args], { env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`helm ${args.join(' ')} failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}
