// `npm run oracle:build`: builds the budget oracle into the cache (CI does this before the tests).
import { ensureBudgetOracle } from './oracle.js';

process.stdout.write(`budget oracle: ${await ensureBudgetOracle()}\n`);
