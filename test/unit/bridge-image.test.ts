// No container engine runs here, so bridge/Dockerfile is never built in CI; this test holds it to what a
// build needs and to how the chart runs the image instead. Every module the bridge loads must be copied
// into the build stage, every package it imports must survive the runtime stage's `npm ci --omit=dev`, the
// entry point must be what tsc emits for bridge/main.ts, and the port, user and image name must be the
// chart's. A new import from outside shared/ and bridge/, or of a devDependency, fails here instead of
// in the first image build.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bridgeDefaults } from '../../bridge/config.js';

const root = join(import.meta.dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'bridge', 'Dockerfile'), 'utf8');
const values = parse(readFileSync(join(root, 'charts/nodeclaim-azure/values.yaml'), 'utf8')) as {
  controller: { image: { repository: string; tag: string }; healthProbe: { port: number } };
  podSecurityContext: { runAsUser: number; runAsGroup: number; runAsNonRoot: boolean };
};
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The instructions of one stage: from its FROM line to the next. */
function stages(): string[][] {
  const result: string[][] = [];
  for (const line of dockerfile.split('\n')) {
    const instruction = line.trim();
    if (instruction === '' || instruction.startsWith('#')) continue;
    if (/^FROM\s/i.test(instruction)) result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

/** Every source file bridge/main.ts loads, relative to the root, and every package it imports. */
function bridgeImports(): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [join(root, 'bridge', 'main.ts')];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    const name = relative(root, file);
    if (files.has(name)) continue;
    files.add(name);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (specifier.startsWith('.')) {
        const target = join(dirname(file), specifier).replace(/\.js$/, '.ts');
        if (!existsSync(target)) throw new Error(`${name} imports ${specifier}, which has no ${target}`);
        pending.push(target);
      } else if (!specifier.startsWith('node:')) {
        const parts = specifier.split('/');
        packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string));
      }
    }
  }
  return { files: [...files].sort(), packages: [...packages].sort() };
}

describe('bridge/Dockerfile', () => {
  const [build, runtime] = stages();

  it('has a build stage and a runtime stage', () => {
    expect(stages()).toHaveLength(2);
    expect(build?.[0]).toMatch(/^FROM node:22\S* AS build$/);
    expect(runtime?.[0]).toMatch(/^FROM node:22\S*$/);
  });

  it('copies every module the bridge loads into the build stage', () => {
    const copied = (build ?? [])
      .map((instruction) => /^COPY\s+(\S+)\s+\.\/\1$/.exec(instruction)?.[1])
      .filter((directory): directory is string => directory !== undefined);
    const { files } = bridgeImports();
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      expect(
        copied.some((directory) => file.startsWith(`${directory}/`)),
        `${file} is outside ${copied.join(', ')}`,
      ).toBe(true);
    }
    expect(build).toContain('COPY tsconfig.json tsconfig.build.json ./');
    const included = (
      JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] }
    ).include;
    for (const directory of copied) expect(included).toContain(directory);
  });

  it('imports only production dependencies, which the runtime stage installs', () => {
    const { packages } = bridgeImports();
    expect(packages).toContain('@kubernetes/client-node');
    for (const name of packages) {
      expect(manifest.dependencies, `${name} is not in dependencies`).toHaveProperty([name]);
    }
    expect(runtime).toContain('RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force');
    expect(runtime).toContain('COPY --from=build /app/dist ./dist');
  });

  it("runs what tsc emits for bridge/main.ts, on the chart's port, as the chart's user", () => {
    const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    expect(compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
    expect(runtime?.at(-1)).toBe('ENTRYPOINT ["node", "dist/bridge/main.js"]');
    // The chart passes BRIDGE_HEALTH_PORT from this value; the image's default is the bridge's own.
    expect(runtime).toContain(`EXPOSE ${bridgeDefaults.healthPort}`);
    expect(values.controller.healthProbe.port).toBe(bridgeDefaults.healthPort);
    expect(values.podSecurityContext.runAsNonRoot).toBe(true);
    expect(runtime).toContain(
      `USER ${values.podSecurityContext.runAsUser}:${values.podSecurityContext.runAsGroup}`,
    );
  });

  it("is the chart's default image: its repository name, tagged with the appVersion unless set", () => {
    expect(values.controller.image.repository).toBe('nodeclaim-event-bridge');
    expect(values.controller.image.tag).toBe('');
    expect(dockerfile).toContain('-t <registry>/nodeclaim-event-bridge:');
    const postprovision = readFileSync(join(root, 'infra/hooks/postprovision.mjs'), 'utf8');
    expect(postprovision).toContain("join(root, 'bridge/Dockerfile')");
    expect(postprovision).toContain('/nodeclaim-event-bridge');
  });

  it("caps V8's heap at half the container's memory limit or less, the same limit in the chart and in infra/k8s", () => {
    const heapCap = /^ENV NODE_OPTIONS=--max-old-space-size=(\d+)$/m.exec(dockerfile)?.[1];
    expect(heapCap, 'the runtime stage sets NODE_OPTIONS=--max-old-space-size=<MiB>').toBeDefined();
    const mebibytes = (quantity: string): number => {
      const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
      if (!match) throw new Error(`not a Mi or Gi quantity: ${quantity}`);
      return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
    };
    const chartLimit = (
      parse(readFileSync(join(root, 'charts/nodeclaim-azure/values.yaml'), 'utf8')) as {
        controller: { resources: { limits: { memory: string } } };
      }
    ).controller.resources.limits.memory;
    const deployment = parse(readFileSync(join(root, 'infra/k8s/bridge/deployment.yaml'), 'utf8')) as {
      spec: { template: { spec: { containers: { resources: { limits: { memory: string } } }[] } } };
    };
    const manifestLimit = deployment.spec.template.spec.containers[0]?.resources.limits.memory ?? '';
    expect(mebibytes(manifestLimit)).toBe(mebibytes(chartLimit));
    // The other half is for what is not old space: the young generation, code, buffers and the runtime
    // (test/bench/bridge-pods-bench.ts sets the peak RSS beside the limit).
    expect(Number(heapCap) * 2).toBeLessThanOrEqual(mebibytes(chartLimit));
  });
});
