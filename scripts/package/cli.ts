// `npm run package`: the Function App's deployment package for Flex Consumption. Writes the staged
// folder .package/app (what `azd deploy` zips, azure.yaml's `dist`) and .package/nodeclaim-functions.zip
// (for `az functionapp deployment source config-zip`), and prints their sizes. Run after `npm run build`.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { productionFiles } from './production-files.js';
import { ZipWriter } from './zip-writer.js';

export interface PackageResult {
  zipPath: string;
  stagedDir: string;
  files: number;
  unpackedBytes: number;
  zipBytes: number;
}

export function buildPackage(root: string, outDir = join(root, '.package')): PackageResult {
  const stagedDir = join(outDir, 'app');
  const zipPath = join(outDir, 'nodeclaim-functions.zip');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(stagedDir, { recursive: true });
  const zip = new ZipWriter(zipPath);
  let unpackedBytes = 0;
  const files = productionFiles(root);
  for (const file of files) {
    const data = typeof file.source === 'string' ? readFileSync(file.source) : file.source;
    unpackedBytes += data.length;
    zip.add(file.path, data, file.mode);
    const target = join(stagedDir, file.path);
    mkdirSync(dirname(target), { recursive: true });
    if (typeof file.source === 'string') copyFileSync(file.source, target);
    else writeFileSync(target, file.source);
  }
  return { zipPath, stagedDir, files: files.length, unpackedBytes, zipBytes: zip.close() };
}

const megabytes = (bytes: number): string => `${(bytes / 1_000_000).toFixed(1)} MB`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = join(import.meta.dirname, '..', '..');
  const result = buildPackage(root);
  console.log(
    `Function App package: ${result.zipPath}\n` +
      `  ${result.files} files, ${megabytes(result.unpackedBytes)} unpacked (staged in ${result.stagedDir}), ` +
      `${megabytes(result.zipBytes)} zipped`,
  );
}
