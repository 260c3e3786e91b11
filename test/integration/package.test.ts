// `npm run package` builds a package that runs with its production dependencies only: the zip,
// unpacked in a directory with no node_modules above it, imports the entry point and registers every
// function with @azure/functions and durable-functions (the HTTP triggers anonymous, on their routes). The
// Functions host's worker, which provides `@azure/functions-core` to the app, cannot run here; a recorder
// of the same three calls stands in for it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definitions } from '../../functions/index.js';
import { buildPackage, type PackageResult } from '../../scripts/package/cli.js';
import { unzip } from '../support/unzip.js';

const root = join(import.meta.dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'nodeclaim-package-'));
let result: PackageResult;
let names: string[];
const unpacked = join(work, 'unpacked');

const fakeWorker = `
const registered = [];
const httpTriggers = [];
module.exports = {
  registerFunction(metadata) {
    registered.push(metadata.name);
    for (const binding of Object.values(metadata.bindings ?? {}))
      if (binding.type === 'httpTrigger')
        httpTriggers.push({ name: metadata.name, route: binding.route, methods: binding.methods, authLevel: binding.authLevel });
    return { dispose() {} };
  },
  registerHook() { return { dispose() {} }; },
  setProgrammingModel() {},
  log() {},
  registered,
  httpTriggers,
};
`;

beforeAll(() => {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  result = buildPackage(root, join(work, 'out'));
  names = unzip(result.zipPath, unpacked);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the deployment package', () => {
  it('holds the compiled app, host.json and production dependencies only', () => {
    expect(names).toContain('dist/functions/index.js');
    expect(names).toContain('host.json');
    expect(names).toContain('node_modules/@azure/functions/package.json');
    expect(names).toContain('node_modules/@kubernetes/client-node/package.json');
    for (const devOnly of [
      'node',
      'vitest',
      'typescript',
      'azurite',
      'tsx',
      'eslint',
      'yaml',
      '@cdktf/hcl2json',
    ])
      expect(names.filter((n) => n.startsWith(`node_modules/${devOnly}/`))).toEqual([]);
    expect(
      names.filter(
        (n) => n.startsWith('dist/local/') || n.startsWith('dist/bridge/') || n.startsWith('dist/test/'),
      ),
    ).toEqual([]);
    expect(names.filter((n) => n.endsWith('.map') || n.endsWith('.d.ts'))).toEqual([]);
    console.log(`package: ${names.length} files, ${(result.zipBytes / 1e6).toFixed(1)} MB zipped`);
  });

  it('imports and registers every function with production dependencies only', () => {
    expect(existsSync(join(work, 'node_modules'))).toBe(false);
    const worker = join(unpacked, 'node_modules', '@azure', 'functions-core');
    mkdirSync(worker, { recursive: true });
    writeFileSync(
      join(worker, 'package.json'),
      JSON.stringify({ name: '@azure/functions-core', main: 'index.js' }),
    );
    writeFileSync(join(worker, 'index.js'), fakeWorker);
    const script = `
      import { createRequire } from 'node:module';
      const main = JSON.parse((await import('node:fs')).readFileSync('package.json', 'utf8')).main;
      await import('./' + main);
      const core = createRequire(import.meta.url)('@azure/functions-core');
      console.log(JSON.stringify({ registered: core.registered, httpTriggers: core.httpTriggers }));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: unpacked,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    const { registered, httpTriggers } = JSON.parse(output.trim().split('\n').pop() ?? '{}') as {
      registered: string[];
      httpTriggers: { name: string; route: string; methods: string[]; authLevel: string }[];
    };
    expect(registered.sort()).toEqual(definitions.map((d) => d.name).sort());
    // The HTTP triggers as the Functions host indexes them: anonymous (the app verifies the caller's
    // Entra ID token itself), on their routes and methods.
    expect(httpTriggers.sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      definitions
        .flatMap((d) =>
          d.kind === 'http'
            ? [{ name: d.name, route: d.route, methods: [...d.methods], authLevel: 'anonymous' }]
            : [],
        )
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(httpTriggers.map((trigger) => trigger.route).sort()).toEqual([
      'explain/node/{name}',
      'explain/nodepool/{name}',
      'explain/pod/{namespace}/{name}',
      'explain/what-if',
    ]);
  });
});
