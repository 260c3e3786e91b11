// The files of the Function App's deployment package: the compiled functions and the library they use,
// host.json, a package.json without devDependencies, and the production dependencies as package-lock.json
// records them (entries not marked "dev"), read from the installed node_modules. Type declarations,
// source maps, TypeScript sources and Markdown are left out: nothing loads them at run time.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export interface PackageFile {
  /** Path inside the package, with forward slashes. */
  path: string;
  /** Where to read it from, or the content itself. */
  source: string | Buffer;
  mode: number;
}

/** Compiled folders the Function App runs; bridge/ and local/ are not part of it. */
export const APP_FOLDERS = ['dist/functions', 'dist/shared'] as const;
const LEFT_OUT = /(\.d\.[cm]?ts|\.map|(?<!\.d)\.[cm]?ts|\.md)$/i;

interface LockEntry {
  dev?: boolean;
  link?: boolean;
  optional?: boolean;
}

function filesUnder(root: string, dir: string, skip: (relativePath: string) => boolean): PackageFile[] {
  const files: PackageFile[] = [];
  for (const name of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    const stats = statSync(join(root, path));
    if (!stats.isFile()) continue;
    const inside = relative(dir, path);
    if (skip(inside)) continue;
    files.push({
      path: path.split(sep).join('/'),
      source: join(root, path),
      mode: stats.mode & 0o111 ? 0o755 : 0o644,
    });
  }
  return files;
}

/** Installed directories of the production dependencies (nested ones included), from package-lock.json. */
export function productionPackageDirs(root: string): string[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const dirs: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.link) continue;
    if (!existsSync(join(root, path))) {
      // Optional dependencies exist only on the platforms they are for.
      if (entry.optional) continue;
      throw new Error(
        `${path} is a production dependency in package-lock.json but is not installed: run npm ci`,
      );
    }
    dirs.push(path);
  }
  return dirs;
}

export function productionFiles(root: string): PackageFile[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  // The explain CLI (bin) runs from a checkout, not from the app: its shims are not in the package.
  const {
    devDependencies: _dev,
    scripts: _scripts,
    allowScripts: _allow,
    bin: _bin,
    ...runtimeManifest
  } = manifest;
  const files: PackageFile[] = [
    {
      path: 'package.json',
      source: Buffer.from(`${JSON.stringify(runtimeManifest, null, 2)}\n`),
      mode: 0o644,
    },
    { path: 'host.json', source: join(root, 'host.json'), mode: 0o644 },
  ];
  for (const folder of APP_FOLDERS) {
    if (!existsSync(join(root, folder))) throw new Error(`${folder} is missing: run npm run build first`);
    files.push(...filesUnder(root, folder, (path) => path.endsWith('.map')));
  }
  for (const dir of productionPackageDirs(root)) {
    // Nested node_modules are packages of their own, listed separately by the lockfile.
    files.push(
      ...filesUnder(root, dir, (path) => path.split(sep).includes('node_modules') || LEFT_OUT.test(path)),
    );
  }
  return files;
}
