#!/usr/bin/env node
// `kubectl nodeclaim-azure …`: kubectl runs an executable named kubectl-nodeclaim_azure found on PATH as
// its plugin (npm link puts this shim there under that name); the same CLI as nodeclaim-azure, with help
// and errors naming the command the user typed.
import { register } from 'tsx/esm/api';

register();
const { main } = await import(new URL('../scripts/explain/cli.ts', import.meta.url).href);
await main('kubectl nodeclaim-azure');
