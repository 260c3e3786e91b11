// `npm run helm:build` builds Helm into the cache (CI does this before linting the chart);
// `npm run helm -- <args>` runs that Helm.
import { spawn } from 'node:child_process';
import { ensureHelm } from './helm.js';

const [command, ...rest] = process.argv.slice(2);
const helm = await ensureHelm((line) => process.stderr.write(`${line}\n`));
if (command === 'build') {
  process.stdout.write(`${helm}\n`);
} else {
  const args = command === 'run' ? rest : process.argv.slice(2);
  const child = spawn(helm, args, { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 1));
}
