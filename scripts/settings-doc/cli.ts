// `npm run docs:settings` rewrites the generated tables of docs/settings.md after a change to
// shared/config/setting-table.ts; `-- --check` only reports whether the page is stale (exit 1).
import { readFileSync } from 'node:fs';
import { SETTINGS_DOC, withRenderedSection, writeSettingsDoc } from './render.js';

if (process.argv.includes('--check')) {
  const current = readFileSync(SETTINGS_DOC, 'utf8');
  if ((await withRenderedSection(current)) !== current) {
    process.stderr.write(`${SETTINGS_DOC} is stale: run npm run docs:settings\n`);
    process.exit(1);
  }
} else {
  const changed = await writeSettingsDoc();
  process.stdout.write(`${SETTINGS_DOC} ${changed ? 'rewritten' : 'already current'}\n`);
}
