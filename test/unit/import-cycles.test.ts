// The cycle check `npm run lint` runs: it must find a cycle (through `import type` and `export from` too)
// and must not report an acyclic graph or a package import; among the folders of shared/lifecycle/ it
// must find two that need each other, the files directly in it counting as one more folder. The fixtures are written to a temporary
// folder so the repository itself never holds a cycle.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findFolderCycles,
  findImportCycles,
  ROOT_FILES,
  sourceFiles,
} from '../../scripts/check-import-cycles.js';

let root: string | undefined;

function project(files: Record<string, string>): string {
  root = mkdtempSync(path.join(tmpdir(), 'import-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(root, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return root;
}

const cyclesIn = (files: Record<string, string>): string[][] => {
  const dir = project(files);
  return findImportCycles(sourceFiles([dir])).map((cycle) => cycle.map((f) => path.relative(dir, f)));
};

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe('findImportCycles', () => {
  it('finds a cycle across folders and names it as a closed path', () => {
    expect(
      cyclesIn({
        'sweep/steps.ts': "import { drift } from '../disruption/drift.js';\nexport const steps = [drift];\n",
        'disruption/drift.ts':
          "import { forEach } from '../sweep/helpers.js';\nexport const drift = forEach;\n",
        'sweep/helpers.ts': "import { steps } from './steps.js';\nexport const forEach = steps;\n",
        'unrelated.ts': "import { steps } from './sweep/steps.js';\nexport const x = steps;\n",
      }),
    ).toEqual([['disruption/drift.ts', 'sweep/helpers.ts', 'sweep/steps.ts', 'disruption/drift.ts']]);
  });

  it('counts type-only imports, re-exports and dynamic imports', () => {
    expect(
      cyclesIn({
        'a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
        'b.ts': "export type { A as B } from './a.js';\n",
      }),
    ).toHaveLength(1);
    expect(
      cyclesIn({
        'a.ts': "export const load = () => import('./b.js');\n",
        'b.ts': "import { load } from './a.js';\nexport const b = load;\n",
      }),
    ).toHaveLength(1);
  });

  it('finds a module that imports itself, and resolves folder index files', () => {
    expect(
      cyclesIn({ 'self.ts': "import { x } from './self.js';\nexport const y = x;\nexport const x = 1;\n" }),
    ).toEqual([['self.ts', 'self.ts']]);
    expect(
      cyclesIn({
        'lib/index.ts': "import { a } from '../a.js';\nexport const lib = a;\n",
        'a.ts': "import { lib } from './lib';\nexport const a = lib;\n",
      }),
    ).toHaveLength(1);
  });

  it('reports nothing for a diamond, a package import or a missing file', () => {
    expect(
      cyclesIn({
        'top.ts': "import './left.js';\nimport './right.js';\n",
        'left.ts': "import './bottom.js';\nimport 'node:fs';\nimport '@azure/functions';\n",
        'right.ts': "import './bottom.js';\nimport './missing.js';\n",
        'bottom.ts': 'export const bottom = 1;\n',
      }),
    ).toEqual([]);
  });
});

describe('findFolderCycles', () => {
  const folderCyclesIn = (files: Record<string, string>) => {
    const dir = project(files);
    return findFolderCycles(sourceFiles([dir]), path.join(dir, 'lifecycle')).map(({ folders, imports }) => ({
      folders,
      imports: imports.map(({ from, to }) => `${path.relative(dir, from)} > ${path.relative(dir, to)}`),
    }));
  };

  it('finds two folders that import each other though no two files do, naming an import per step', () => {
    expect(
      folderCyclesIn({
        'lifecycle/sweep/steps.ts':
          "import { drift } from '../disruption/drift.js';\nexport const steps = [drift];\n",
        'lifecycle/sweep/step.ts': 'export type Step = () => void;\n',
        'lifecycle/disruption/drift.ts':
          "import type { Step } from '../sweep/step.js';\nexport const drift: Step = () => undefined;\n",
      }),
    ).toEqual([
      {
        folders: ['disruption', 'sweep', 'disruption'],
        imports: [
          'lifecycle/disruption/drift.ts > lifecycle/sweep/step.ts',
          'lifecycle/sweep/steps.ts > lifecycle/disruption/drift.ts',
        ],
      },
    ]);
  });

  it('finds a loop around three folders', () => {
    expect(
      folderCyclesIn({
        'lifecycle/a/x.ts': "import '../b/y.js';\n",
        'lifecycle/b/y.ts': "import '../c/z.js';\n",
        'lifecycle/c/z.ts': "import '../a/w.js';\n",
        'lifecycle/a/w.ts': 'export const w = 1;\n',
      }).map((cycle) => cycle.folders),
    ).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('ignores folders outside the parent, even when an import passes through one', () => {
    expect(
      folderCyclesIn({
        'lifecycle/common.ts': "import '../outside/o.js';\nexport const common = 1;\n",
        'lifecycle/a/x.ts': "import '../common.js';\nimport '../b/y.js';\n",
        'lifecycle/b/y.ts': "import '../common.js';\n",
        'outside/o.ts': "import '../lifecycle/a/x.js';\n",
      }),
    ).toEqual([]);
  });

  it('counts the files directly in the parent as one folder: a root file and a folder importing each other fail', () => {
    expect(
      folderCyclesIn({
        'lifecycle/dependencies.ts': 'export interface Dependencies { now(): Date }\n',
        'lifecycle/freed-slot.ts':
          "import { step } from './disruption/step.js';\nexport const freedSlot = step;\n",
        'lifecycle/disruption/step.ts':
          "import type { Dependencies } from '../dependencies.js';\nexport const step = (deps: Dependencies) => deps.now();\n",
      }),
    ).toEqual([
      {
        folders: [ROOT_FILES, 'disruption', ROOT_FILES],
        imports: [
          'lifecycle/freed-slot.ts > lifecycle/disruption/step.ts',
          'lifecycle/disruption/step.ts > lifecycle/dependencies.ts',
        ],
      },
    ]);
  });

  it('finds the root in a loop around folders', () => {
    expect(
      folderCyclesIn({
        'lifecycle/sweep-step.ts': "import './sweep/memory.js';\n",
        'lifecycle/sweep/memory.ts': "import '../disruption/step.js';\n",
        'lifecycle/disruption/step.ts': "import '../sweep-step.js';\n",
      }).map((cycle) => cycle.folders),
    ).toEqual([[ROOT_FILES, 'sweep', 'disruption', ROOT_FILES]]);
  });

  it('lets the root be common ground: its files import each other and what is outside, never a folder', () => {
    expect(
      folderCyclesIn({
        'lifecycle/dependencies.ts':
          "import './settings.js';\nimport '../kube/reader.js';\nexport const deps = 1;\n",
        'lifecycle/settings.ts': 'export const settings = 1;\n',
        'kube/reader.ts': 'export const reader = 1;\n',
        'lifecycle/a/x.ts': "import '../dependencies.js';\nimport '../b/y.js';\n",
        'lifecycle/b/y.ts': "import '../dependencies.js';\nimport '../settings.js';\n",
      }),
    ).toEqual([]);
  });
});
