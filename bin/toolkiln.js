#!/usr/bin/env node
// The CLI is TypeScript run through tsx's loader, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
