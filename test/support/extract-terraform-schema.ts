// Writes test/fixtures/terraform-provider-schemas.json: for the provider versions pinned in
// infra/terraform/versions.tf, the documented arguments of every resource and data source type the
// templates use, and of the provider blocks. Input: local clones of the providers' repositories (the
// documentation is read at the version's tag, so the fixture describes exactly the pinned release).
//
//   npx tsx test/support/extract-terraform-schema.ts \
//     --azurerm <clone of hashicorp/terraform-provider-azurerm> --azapi <clone of Azure/terraform-provider-azapi>
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { documentedSchema, type DocumentedSchema } from './terraform-docs-schema.js';

const root = join(import.meta.dirname, '..', '..');
const terraformDir = join(root, 'infra', 'terraform');
export const fixturePath = join(root, 'test', 'fixtures', 'terraform-provider-schemas.json');

interface ProviderDocs {
  version: string;
  tag: string;
  resourcePage(type: string): string;
  dataPage(type: string): string;
  providerPages: { main: string; blocks?: string };
}

const layouts: Record<string, (version: string) => ProviderDocs> = {
  azurerm: (version) => ({
    version,
    tag: `v${version}`,
    resourcePage: (type) => `website/docs/r/${type.replace(/^azurerm_/, '')}.html.markdown`,
    dataPage: (type) => `website/docs/d/${type.replace(/^azurerm_/, '')}.html.markdown`,
    providerPages: {
      main: 'website/docs/index.html.markdown',
      blocks: 'website/docs/guides/features-block.html.markdown',
    },
  }),
  azapi: (version) => ({
    version,
    tag: `v${version}`,
    resourcePage: (type) => `docs/resources/${type.replace(/^azapi_/, '')}.md`,
    dataPage: (type) => `docs/data-sources/${type.replace(/^azapi_/, '')}.md`,
    providerPages: { main: 'docs/index.md' },
  }),
};

export interface SchemaFixture {
  providers: Record<string, { version: string; source: string; provider: DocumentedSchema }>;
  resources: Record<string, DocumentedSchema>;
  data: Record<string, DocumentedSchema>;
}

type Hcl = Record<string, Record<string, unknown>>;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { azurerm: { type: 'string' }, azapi: { type: 'string' } } });
  const clones: Record<string, string | undefined> = { azurerm: values.azurerm, azapi: values.azapi };
  const files = readdirSync(terraformDir).filter((f) => f.endsWith('.tf'));
  const parsed = await Promise.all(
    files.map(async (f) => (await parseHcl(f, readFileSync(join(terraformDir, f), 'utf8'))) as Hcl),
  );
  const pinned = new Map<string, string>();
  for (const hcl of parsed) {
    const terraform =
      (hcl.terraform as unknown as Array<{
        required_providers?: Array<Record<string, { version: string; source: string }>>;
      }>) ?? [];
    for (const block of terraform)
      for (const providers of block.required_providers ?? [])
        for (const [name, spec] of Object.entries(providers)) {
          if (!/^\d+\.\d+\.\d+$/.test(spec.version))
            throw new Error(`${name} is not pinned to one version: ${spec.version}`);
          pinned.set(name, spec.version);
        }
  }
  const types = (kind: 'resource' | 'data') =>
    [...new Set(parsed.flatMap((hcl) => Object.keys(hcl[kind] ?? {})))].sort();
  const fixture: SchemaFixture = { providers: {}, resources: {}, data: {} };
  const docsOf = (type: string) => {
    const provider = type.split('_')[0] as string;
    const version = pinned.get(provider);
    const clone = clones[provider];
    const layout = layouts[provider];
    if (!version || !clone || !layout) throw new Error(`no pinned version, clone or layout for ${provider}`);
    return { provider, clone, docs: layout(version) };
  };
  const show = (clone: string, tag: string, path: string) =>
    execFileSync('git', ['-C', clone, 'show', `${tag}:${path}`], { encoding: 'utf8', maxBuffer: 1 << 26 });
  for (const [name, version] of pinned) {
    const clone = clones[name];
    const layout = layouts[name];
    if (!clone || !layout) throw new Error(`pass --${name} <clone>`);
    const docs = layout(version);
    const provider = documentedSchema(show(clone, docs.tag, docs.providerPages.main));
    if (docs.providerPages.blocks) {
      const extra = documentedSchema(show(clone, docs.tag, docs.providerPages.blocks));
      for (const [block, args] of Object.entries(extra.blocks)) provider.blocks[block] = args;
    }
    fixture.providers[name] = { version, source: `${docs.tag}:${docs.providerPages.main}`, provider };
  }
  for (const type of types('resource')) {
    const { clone, docs } = docsOf(type);
    fixture.resources[type] = documentedSchema(show(clone, docs.tag, docs.resourcePage(type)));
  }
  for (const type of types('data')) {
    const { clone, docs } = docsOf(type);
    fixture.data[type] = documentedSchema(show(clone, docs.tag, docs.dataPage(type)));
  }
  writeFileSync(fixturePath, `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(
    `wrote ${fixturePath}: ${Object.keys(fixture.resources).length} resource and ${Object.keys(fixture.data).length} data source types`,
  );
}

await main();
