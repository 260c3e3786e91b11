// In-memory Nodes with the NodeStore contract the lifecycle phases rely on: every write bumps the
// resourceVersion, a JSON Patch pinned to a stale one answers 409 and one to a missing Node 404 (as the
// API server answers), deletion waits for finalizers. Used by fake-lifecycle.ts; a test seeds Nodes,
// runs a phase and asserts on the stored Nodes and on `writes`.
import type { JsonPatchOperation } from '../../shared/decisions/node-patch.js';
import { sameProviderID } from '../../shared/decisions/registration.js';
import type { NodeStore } from '../../shared/kube/node-store.js';
import type { Node } from '../../shared/models/kube.js';
import { FakeApiError } from './fake-api-error.js';
import { equalitySelector } from './label-selector.js';

const clone = <T>(value: T): T => structuredClone(value);

type Container = Record<string, unknown> | unknown[];

function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The container a JSON Pointer's last token lives in, and that token; 422 if the path is not there. */
function locate(document: unknown, path: string): { parent: Container; key: string } {
  const tokens = path.split('/').slice(1).map(unescapeToken);
  const key = tokens.pop();
  let parent: unknown = document;
  for (const token of tokens) {
    parent = Array.isArray(parent)
      ? parent[Number(token)]
      : (parent as Record<string, unknown> | undefined)?.[token];
  }
  if (key === undefined || typeof parent !== 'object' || parent === null) {
    throw new FakeApiError(422, `JSON Patch path ${path} does not exist`);
  }
  return { parent: parent as Container, key };
}

/** RFC 6902 JSON Patch (the operations node-patch.ts builds); a failed `test` answers 422. */
function applyJsonPatch<T>(document: T, operations: readonly JsonPatchOperation[]): T {
  const result = clone(document);
  for (const operation of operations) {
    const { parent, key } = locate(result, operation.path);
    if (Array.isArray(parent)) {
      const index = key === '-' ? parent.length : Number(key);
      if (operation.op === 'add') parent.splice(index, 0, clone(operation.value));
      else if (operation.op === 'replace') parent[index] = clone(operation.value);
      else if (operation.op === 'remove') parent.splice(index, 1);
      else if (JSON.stringify(parent[index]) !== JSON.stringify(operation.value)) {
        throw new FakeApiError(422, `JSON Patch test of ${operation.path} failed`);
      }
      continue;
    }
    if ((operation.op === 'replace' || operation.op === 'remove') && !(key in parent)) {
      throw new FakeApiError(422, `JSON Patch ${operation.op} of missing ${operation.path}`);
    }
    if (operation.op === 'add' || operation.op === 'replace') parent[key] = clone(operation.value);
    else if (operation.op === 'remove') delete parent[key];
    else if (JSON.stringify(parent[key]) !== JSON.stringify(operation.value)) {
      throw new FakeApiError(422, `JSON Patch test of ${operation.path} failed`);
    }
  }
  return result;
}

export class FakeNodes implements NodeStore {
  private readonly nodes = new Map<string, Node>();
  private version = 0;
  /** Every write, in order: what a test asserts a phase did. */
  readonly writes: { verb: 'patch' | 'delete'; name: string }[] = [];
  /** Runs inside patch before it is applied: lets a test play a concurrent writer (a kubelet update). */
  beforePatch: ((name: string) => void) | undefined;

  /** Puts a Node as the API server would hold it (a fresh resourceVersion, a uid if it had none). */
  seed(node: Node): Node {
    const stored = clone(node);
    stored.metadata.uid ??= `uid-${stored.metadata.name}`;
    stored.metadata.resourceVersion = String(++this.version);
    this.nodes.set(stored.metadata.name, stored);
    return clone(stored);
  }

  peek(name: string): Node | undefined {
    const node = this.nodes.get(name);
    return node ? clone(node) : undefined;
  }

  async get(name: string): Promise<Node | undefined> {
    return this.peek(name);
  }

  async list(): Promise<Node[]> {
    return [...this.nodes.values()].map(clone);
  }

  /** Equality selectors only (label-selector.ts): the ones the lifecycle sends. */
  async listLabelled(labelSelector: string): Promise<Node[]> {
    const selects = equalitySelector(labelSelector);
    return (await this.list()).filter((node) => selects(node.metadata.labels));
  }

  async patch(name: string, operations: JsonPatchOperation[]): Promise<Node> {
    this.beforePatch?.(name);
    const current = this.nodes.get(name);
    if (!current) throw new FakeApiError(404, `Node ${name} not found`);
    const next = applyJsonPatch(current, operations);
    if (next.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw new FakeApiError(409, `Node ${name}: the object has been modified`);
    }
    this.writes.push({ verb: 'patch', name });
    next.metadata.resourceVersion = String(++this.version);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) this.nodes.delete(name);
    else this.nodes.set(name, next);
    return clone(next);
  }

  async delete(name: string): Promise<void> {
    const current = this.nodes.get(name);
    if (!current) throw new FakeApiError(404, `Node ${name} not found`);
    this.writes.push({ verb: 'delete', name });
    if (current.metadata.finalizers?.length) {
      current.metadata.deletionTimestamp ??= new Date(0).toISOString();
      current.metadata.resourceVersion = String(++this.version);
    } else {
      this.nodes.delete(name);
    }
  }

  async withProviderID(providerID: string): Promise<Node[]> {
    return [...this.nodes.values()]
      .filter((node) => node.spec.providerID && sameProviderID(node.spec.providerID, providerID))
      .map(clone);
  }
}
