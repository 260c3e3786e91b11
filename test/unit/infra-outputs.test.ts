// Terraform stays an alternative to Bicep with the same outputs (snake_case there, camelCase here), which
// the deploy hooks (infra/hooks/) read by name whichever tool produced them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

it('Bicep and Terraform have the same outputs, and the hooks read only those', () => {
  const bicep = [...read('infra/bicep/main.bicep').matchAll(/^output (\w+) /gm)].map((m) =>
    snake(m[1] as string),
  );
  const terraform = [...read('infra/terraform/outputs.tf').matchAll(/^output "(\w+)"/gm)].map(
    (m) => m[1] as string,
  );
  expect(terraform.sort()).toEqual(bicep.sort());
  const hook = read('infra/hooks/postprovision.mjs');
  const used = [...hook.matchAll(/(?:output|required)\('([a-z]\w+)'/g)].map((m) => snake(m[1] as string));
  expect(used.length).toBeGreaterThan(5);
  expect(used.filter((name) => !terraform.includes(name))).toEqual([]);
});
