// The lint rule that keeps one NodeClaim writer (eslint.config.js): a file under shared/lifecycle/ (or the
// cloud provider) that calls a write method on the NodeClaims client fails ESLint, however it reaches the
// client; the writer itself, reads, creates and deletes pass. Run through ESLint's Node API on fixture
// sources placed, virtually, at repository paths, so the rule is checked as the repository applies it.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The rule's messages for `source` linted as if it were `path` in the repository. */
async function restrictedWrites(source: string, path: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${path}` });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-syntax')
    .map((message) => message.message);
}

const writing = `// A fixture phase that writes the NodeClaim itself.
import type { LifecycleDependencies } from '../dependencies.js';

export async function writesItself(deps: LifecycleDependencies, name: string): Promise<void> {
  await deps.objects.nodeClaims.mergePatch(name, { metadata: { annotations: { a: 'b' } } });
  await deps.objects.nodeClaims.mergePatchStatus(name, { status: {} });
  await deps.objects.nodeClaims.jsonPatch(name, []);
  const { nodeClaims } = deps.objects;
  await nodeClaims.mergePatch(name, {});
}
`;

const reading = `// A fixture phase that reads, creates and deletes, and leaves writes to the writer.
import type { LifecycleDependencies } from '../dependencies.js';
import type { NodeClaim } from '../../models/index.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';

export async function asksTheWriter(deps: LifecycleDependencies, nodeClaim: NodeClaim): Promise<void> {
  await deps.objects.nodeClaims.get(nodeClaim.metadata.name);
  await deps.objects.nodeClaims.list();
  await deps.objects.nodeClaims.create(nodeClaim);
  await deps.objects.nodeClaims.delete(nodeClaim.metadata.name);
  await deps.objects.nodePools.mergePatch('pool', {});
  await writeNodeClaim(deps.objects, nodeClaim, (current) => ({ status: { ...current.status } }));
}
`;

describe('NodeClaims have one writer', () => {
  test('a lifecycle file calling a NodeClaim write method fails, by property or destructured', async () => {
    const messages = await restrictedWrites(writing, 'shared/lifecycle/launch/fixture-writes.ts');
    expect(messages).toHaveLength(4);
    expect(messages.every((m) => m.includes('writeNodeClaim'))).toBe(true);
  });

  test('the cloud provider may not write a NodeClaim either', async () => {
    expect(await restrictedWrites(writing, 'shared/cloudprovider/fixture-writes.ts')).toHaveLength(4);
  });

  test('reads, creates, deletes, other kinds and the writer are allowed', async () => {
    expect(await restrictedWrites(reading, 'shared/lifecycle/launch/fixture-reads.ts')).toEqual([]);
  });

  test('the writer itself calls the client', async () => {
    expect(await restrictedWrites(writing, 'shared/lifecycle/nodeclaims/nodeclaim-writes.ts')).toEqual([]);
  });
});
