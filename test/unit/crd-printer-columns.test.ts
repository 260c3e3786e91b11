// `kubectl get nodeclaims|nodepools|aksnodeclasses|nodeoverlays|capacitybuffers` (and `-o wide`) must print what upstream's
// CRDs print, column for column, so scripts and habits built on Karpenter keep working. Upstream's columns
// are recorded in docs/reference/upstream-printer-columns.json, taken from upstream's generated CRDs
// (kubernetes-sigs/karpenter `pkg/apis/crds/karpenter.sh_{nodeclaims,nodepools,nodeoverlays}.yaml`,
// Azure/karpenter-provider-azure `pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml`, kubernetes/autoscaler
// `cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_capacitybuffers.yaml`).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
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

/** Upstream's columns per "<crd name>/<version>". */
const upstreamColumns = new Map(
  Object.entries(
    JSON.parse(
      readFileSync(join(root, 'docs', 'reference', 'upstream-printer-columns.json'), 'utf8'),
    ) as Record<string, PrinterColumn[]>,
  ),
);

describe('CRD printer columns', () => {
  const files = existsSync(projectDirectory)
    ? readdirSync(projectDirectory).filter((f) => f.endsWith('.yaml'))
    : [];
  it('covers NodeClaim, NodePool, AKSNodeClass, NodeOverlay and CapacityBuffer', () => {
    expect(files.sort()).toEqual([
      'autoscaling.x-k8s.io_capacitybuffers.yaml',
      'karpenter.azure.com_aksnodeclasses.yaml',
      'karpenter.sh_nodeclaims.yaml',
      'karpenter.sh_nodeoverlays.yaml',
      'karpenter.sh_nodepools.yaml',
    ]);
  });

  for (const file of files) {
    it(`${file}: every version prints exactly upstream's columns, in upstream's order`, () => {
      const project = printerColumnsIn(join(projectDirectory, file));
      expect(project.size).toBeGreaterThan(0);
      for (const [version, columns] of project) {
        expect(upstreamColumns.has(version), `no upstream columns recorded for ${version}`).toBe(true);
        expect(columns, version).toEqual(upstreamColumns.get(version));
      }
    });
  }
});
