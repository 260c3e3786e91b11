// One version names a release everywhere: the chart's version and appVersion (the bridge image's default
// tag), the app's package.json and lockfile, the karpenter_build_info metric the running app reports, and
// the newest released section of CHANGELOG.md. A bump that misses one of them would publish a chart whose
// image tag, metric and changelog disagree about what is running.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildInfoLabels } from '../../shared/observability/build-info.js';

const root = join(import.meta.dirname, '..', '..');
const json = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;
const chart = parse(readFileSync(join(root, 'charts/nodeclaim-azure/Chart.yaml'), 'utf8')) as {
  version: string;
  appVersion: string;
};
const packageVersion = json('package.json')['version'];

describe('the release version', () => {
  it('is a semantic version, the same in Chart.yaml (version and appVersion) and package.json', () => {
    expect(packageVersion).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(chart.version).toBe(packageVersion);
    expect(chart.appVersion).toBe(packageVersion);
  });

  it('is the lockfile root package version', () => {
    const lock = json('package-lock.json') as {
      version: string;
      packages: Record<string, { version: string }>;
    };
    expect(lock.version).toBe(packageVersion);
    expect(lock.packages['']?.version).toBe(packageVersion);
  });

  it('is what karpenter_build_info reports', () => {
    expect(buildInfoLabels({}).version).toBe(packageVersion);
  });

  it('heads CHANGELOG.md: an Unreleased section, then released versions below the current one', () => {
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    const headings = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((match) => match[1]);
    expect(headings[0]).toBe('Unreleased');
    // The Unreleased section is what this version will ship; it says which version that is.
    const unreleased = changelog
      .slice(changelog.indexOf('## [Unreleased]'))
      .split(/^## \[(?!Unreleased)/m)[0];
    expect(unreleased).toContain(`as ${String(packageVersion)}`);
    expect(headings.slice(1)).not.toContain(packageVersion);
    expect(headings.length).toBeGreaterThanOrEqual(2);
  });
});
