// Reads a Terraform provider's published resource documentation into the arguments and nested blocks
// each resource accepts. Two layouts exist: azurerm's hand-written pages ("## Arguments Reference",
// "* `name` - (Required) …", "A `site_config` block supports the following:") and the generated pages
// of framework providers such as azapi ("### Required", "- `name` (String) …", "### Nested Schema for
// `retry`"). Nested blocks are keyed by block name: the documentation itself names them that way.

export interface DocumentedSchema {
  /** Top-level arguments (and blocks) the configuration may set. */
  arguments: string[];
  /** Arguments of each nested block, by block name. */
  blocks: Record<string, string[]>;
  /** Read-only attributes the configuration may reference (besides the arguments). */
  attributes: string[];
}

const bullet = /^\s*[*-] `([a-z0-9_]+)`/;

function add(target: Record<string, string[]>, key: string, name: string): void {
  const list = (target[key] ??= []);
  if (!list.includes(name)) list.push(name);
}

/** azurerm's layout. */
function handWritten(markdown: string): DocumentedSchema {
  const schema: DocumentedSchema = { arguments: [], blocks: {}, attributes: ['id'] };
  let section: 'none' | 'arguments' | 'attributes' = 'none';
  let block: string | undefined;
  for (const line of markdown.split('\n')) {
    if (/^## Arguments? Reference/.test(line)) {
      section = 'arguments';
      block = undefined;
      continue;
    }
    if (/^## Attributes? Reference/.test(line)) {
      section = 'attributes';
      block = undefined;
      continue;
    }
    if (/^## /.test(line)) {
      section = 'none';
      continue;
    }
    const blockHeader =
      /^(?:An?|The|Each) `([a-z0-9_]+)` (?:block|object)s? (supports|exports|contains)/.exec(line);
    if (blockHeader) {
      block = section === 'arguments' && blockHeader[2] === 'supports' ? blockHeader[1] : '(exported)';
      continue;
    }
    const item = bullet.exec(line);
    if (!item) continue;
    const name = item[1] as string;
    if (section === 'arguments') {
      if (block) add(schema.blocks, block, name);
      else if (!schema.arguments.includes(name)) schema.arguments.push(name);
    } else if (section === 'attributes' && block === undefined && !schema.attributes.includes(name)) {
      schema.attributes.push(name);
    }
  }
  delete schema.blocks['(exported)'];
  return schema;
}

/** The generated layout (terraform-plugin-docs and its forks). */
function generated(markdown: string): DocumentedSchema {
  const schema: DocumentedSchema = { arguments: [], blocks: {}, attributes: [] };
  let kind: 'none' | 'argument' | 'attribute' = 'none';
  let block: string | undefined;
  for (const line of markdown.split('\n')) {
    const nested = /^### Nested Schema for `([a-z0-9_.]+)`/.exec(line);
    if (nested) {
      block = (nested[1] as string).split('.').pop();
      kind = 'argument';
      continue;
    }
    if (/^### (Required|Optional)/.test(line)) {
      kind = 'argument';
      continue;
    }
    if (/^### Read-Only/.test(line)) {
      kind = block ? 'none' : 'attribute';
      continue;
    }
    if (/^##? /.test(line)) {
      kind = 'none';
      continue;
    }
    const item = bullet.exec(line);
    if (!item || kind === 'none') continue;
    const name = item[1] as string;
    if (kind === 'attribute') schema.attributes.push(name);
    else if (block) add(schema.blocks, block, name);
    else schema.arguments.push(name);
  }
  return schema;
}

export function documentedSchema(markdown: string): DocumentedSchema {
  return /^## Schema$/m.test(markdown) ? generated(markdown) : handWritten(markdown);
}
