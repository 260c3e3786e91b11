// `kubectl get nodeclaims|nodepools|aksnodeclasses` (and `-o wide`) must print what upstream's CRDs print,
// column for column, so scripts and habits built on Karpenter keep working. The upstream CRDs are kept
// outside the repository, beside its clone (`../shared/reference/crds/`, both in a worktree and on CI);
// REFERENCE_CRDS_DIR points elsewhere when they live somewhere else.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const referenceDirectory = resolve(
  process.env['REFERENCE_CRDS_DIR'] ?? join(root, '..', 'shared', 'reference', 'crds'),
);
const projectDirectory = join(root, 'infra', 'k8s', 'crds');

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority: number;
  format?: string;
  description?: string;
}

interface CrdVersion {
  name: string;
  additionalPrinterColumns?: Record<string, unknown>[];
}

/** Printer columns per served version, keyed "<crd name>/<version>"; priority 0 written out as upstream omits it. */
function printerColumnsIn(file: string): Map<string, PrinterColumn[]> {
  const columns = new Map<string, PrinterColumn[]>();
  for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const crd = document.toJS() as { metadata?: { name: string }; spec?: { versions: CrdVersion[] } } | null;
    if (!crd?.metadata || !crd.spec) continue;
    for (const version of crd.spec.versions) {
      columns.set(
        `${crd.metadata.name}/${version.name}`,
        (version.additionalPrinterColumns ?? []).map((column) => ({
          name: String(column['name']),
          type: String(column['type']),
          jsonPath: String(column['jsonPath']),
          priority: Number(column['priority'] ?? 0),
          // Descriptions are prose the project shortens everywhere; kubectl never prints them.
          ...(column['format'] === undefined ? {} : { format: String(column['format']) }),
        })),
      );
    }
  }
  return columns;
}

/**
 * Upstream's columns for the CRDs the reference folder has no copy of, as upstream's generated CRD prints
 * them (kubernetes-sigs/karpenter `pkg/apis/crds/karpenter.sh_nodeoverlays.yaml`).
 */
const RECORDED_UPSTREAM_COLUMNS: Record<string, Map<string, PrinterColumn[]>> = {
  'karpenter.sh_nodeoverlays.yaml': new Map([
    [
      'nodeoverlays.karpenter.sh/v1alpha1',
      [
        {
          name: 'Ready',
          type: 'string',
          jsonPath: '.status.conditions[?(@.type=="Ready")].status',
          priority: 0,
        },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', priority: 0 },
        { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
      ],
    ],
  ]),
};

function upstreamColumnsOf(file: string): Map<string, PrinterColumn[]> {
  const referenceFile = join(referenceDirectory, file);
  if (existsSync(referenceFile)) return printerColumnsIn(referenceFile);
  const recorded = RECORDED_UPSTREAM_COLUMNS[file];
  if (!recorded)
    throw new Error(`no upstream columns for ${file}: neither in ${referenceDirectory} nor recorded here`);
  return recorded;
}

describe('CRD printer columns', () => {
  it('finds the upstream reference CRDs', () => {
    expect(existsSync(referenceDirectory), `no upstream CRDs at ${referenceDirectory}`).toBe(true);
  });

  const files = existsSync(projectDirectory)
    ? readdirSync(projectDirectory).filter((f) => f.endsWith('.yaml'))
    : [];
  it('covers NodeClaim, NodePool, AKSNodeClass and NodeOverlay', () => {
    expect(files.sort()).toEqual([
      'karpenter.azure.com_aksnodeclasses.yaml',
      'karpenter.sh_nodeclaims.yaml',
      'karpenter.sh_nodeoverlays.yaml',
      'karpenter.sh_nodepools.yaml',
    ]);
  });

  for (const file of files) {
    it(`${file}: every version prints exactly upstream's columns, in upstream's order`, () => {
      const project = printerColumnsIn(join(projectDirectory, file));
      const upstream = upstreamColumnsOf(file);
      expect(project.size).toBeGreaterThan(0);
      for (const [version, columns] of project) {
        expect(upstream.has(version), `upstream has no ${version}`).toBe(true);
        expect(columns, version).toEqual(upstream.get(version));
      }
    });
  }
});
