#!/usr/bin/env node
// `npx nodeclaim-azure …`: the explain CLI is TypeScript, run through the repository's tsx so there is no
// build step between a change and using it.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(new URL('../scripts/explain/cli.ts', import.meta.url).href);
await main('nodeclaim-azure');
