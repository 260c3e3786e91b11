// `npm run chart:sync` writes the chart's copies of infra/k8s (after editing a CRD or an RBAC manifest);
// `npm run chart:sync -- --check` only reports drift and exits 1 on any, for a pre-commit check.
import { chartDrift, syncChart } from './sync.js';

if (process.argv.includes('--check')) {
  const drift = chartDrift();
  for (const line of drift) process.stderr.write(`${line}\n`);
  if (drift.length > 0) process.stderr.write('run `npm run chart:sync`\n');
  process.exit(drift.length > 0 ? 1 : 0);
}
for (const file of syncChart()) process.stdout.write(`wrote ${file}\n`);
