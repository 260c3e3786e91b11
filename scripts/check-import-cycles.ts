// Fails when the project's TypeScript files import each other in a cycle, the equivalent of ESLint's
// import/no-cycle (run by `npm run lint`). Every relative import counts, `import type` included: a cycle
// through types alone still means two modules that cannot be understood, or moved, one without the other.
// It reads import specifiers with the compiler's pre-processor (no type checking), so it takes well under
// a second for the whole repository.
//
// It also fails when two folders of shared/lifecycle/ import each other, directly or around a loop, even
// if no two files do: a folder is the unit a reader opens (launch, termination, disruption, the sweep),
// and one that needs another needing it back cannot be read, or moved, on its own. The files directly in
// shared/lifecycle/ take part as one more unit: were they exempt, a root file could import a folder that
// imports the root back, and the two could not be read apart either. So the root can only be common
// ground that imports no folder; what several folders share otherwise goes to a folder of its own.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'results', 'coverage']);
const SOURCE = /\.(ts|mts|tsx)$/;

/** Every TypeScript source under `roots`, skipping build output, dependencies and hidden folders. */
export function sourceFiles(roots: readonly string[]): string[] {
  const files: string[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || SKIPPED_DIRECTORIES.has(entry.name)) continue;
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(full);
    }
  };
  for (const root of roots) {
    if (statSync(root).isDirectory()) walk(path.resolve(root));
    else files.push(path.resolve(root));
  }
  return files.sort();
}

/** The project files `file` imports (relative specifiers only: a package cannot import back into us). */
export function relativeImports(file: string, known: ReadonlySet<string>): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = new Set<string>();
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = resolve(path.resolve(path.dirname(file), fileName), known);
    if (target) targets.add(target);
  }
  return [...targets];
}

// NodeNext specifiers name the emitted file ('./x.js' for './x.ts').
function resolve(specified: string, known: ReadonlySet<string>): string | undefined {
  const stem = specified.replace(/\.(js|mjs|ts|mts)$/, '');
  const candidates = [`${stem}.ts`, `${stem}.mts`, `${stem}.tsx`, path.join(specified, 'index.ts')];
  return candidates.find((candidate) => known.has(candidate));
}

/**
 * The import cycles among `files`, each as a closed path of files (first and last the same). One cycle is
 * reported per strongly connected component: fixing it usually breaks the component's other cycles too.
 */
export function findImportCycles(files: readonly string[]): string[][] {
  const known = new Set(files);
  const graph = new Map(files.map((file) => [file, relativeImports(file, known)]));
  return stronglyConnected(graph)
    .filter(
      (component) =>
        component.length > 1 || graph.get(component[0] as string)?.includes(component[0] as string),
    )
    .map((component) => cycleWithin(graph, new Set(component)));
}

// Tarjan's algorithm, iterative so a deep import chain cannot overflow the stack.
function stronglyConnected(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: number };
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const target = edges[frame.next++] as string;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}

/** A shortest cycle through the component's first file (breadth-first search back to it). */
function cycleWithin(
  graph: ReadonlyMap<string, readonly string[]>,
  component: ReadonlySet<string>,
): string[] {
  const start = [...component].sort()[0] as string;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const target of graph.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const cycle = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at))
          cycle.push(at);
        return [start, ...cycle.slice(1).reverse(), start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

/** The folders whose folder-level cycles count: the direct subfolders of each of these, and its own files. */
export const LAYERED_FOLDERS = ['shared/lifecycle'];

/** How a cycle names the files directly in the parent, which count together as one folder. */
export const ROOT_FILES = '(root)';

/**
 * The cycles among the direct subfolders of `parent` (an absolute path) and the files directly in it (as
 * one unit, ROOT_FILES), each as a closed path of folder names, and for each step of it one import that
 * makes it (`from` file imports `to` file).
 */
export function findFolderCycles(
  files: readonly string[],
  parent: string,
): { folders: string[]; imports: { from: string; to: string }[] }[] {
  const known = new Set(files);
  const folderOf = (file: string): string | undefined => {
    const relative = path.relative(parent, file);
    if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
    const parts = relative.split(path.sep);
    return parts.length > 1 ? parts[0] : ROOT_FILES;
  };
  const graph = new Map<string, Set<string>>();
  const witness = new Map<string, { from: string; to: string }>();
  for (const file of files) {
    const from = folderOf(file);
    if (from === undefined) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of relativeImports(file, known)) {
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      graph.get(from)?.add(to);
      if (!graph.has(to)) graph.set(to, new Set());
      const edge = `${from}>${to}`;
      if (!witness.has(edge)) witness.set(edge, { from: file, to: target });
    }
  }
  const edges = new Map([...graph].map(([folder, targets]) => [folder, [...targets].sort()]));
  return stronglyConnected(edges)
    .filter((component) => component.length > 1)
    .map((component) => {
      const folders = cycleWithin(edges, new Set(component));
      const imports = folders
        .slice(1)
        .map((to, i) => witness.get(`${folders[i]}>${to}`) as { from: string; to: string });
      return { folders, imports };
    });
}

function main(): void {
  const roots = process.argv.slice(2);
  const files = sourceFiles(roots.length > 0 ? roots : ['.']);
  const relative = (file: string): string => path.relative(process.cwd(), file);
  const cycles = findImportCycles(files);
  if (cycles.length > 0) {
    console.error(
      `${cycles.length} import cycle(s); break each by moving what both sides need into a third module:`,
    );
    for (const cycle of cycles) console.error(`  ${cycle.map(relative).join('\n    -> ')}`);
    process.exitCode = 1;
  }
  for (const layered of LAYERED_FOLDERS) {
    const folderCycles = findFolderCycles(files, path.resolve(layered));
    if (folderCycles.length === 0) continue;
    console.error(
      `${folderCycles.length} folder cycle(s) in ${layered}/ (${ROOT_FILES}: the files directly in it); move what both need into one of them or into a folder of its own:`,
    );
    for (const { folders, imports } of folderCycles) {
      console.error(`  ${folders.join(' -> ')}`);
      for (const { from, to } of imports) console.error(`    ${relative(from)} imports ${relative(to)}`);
    }
    process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
