#!/usr/bin/env node
// The CLI runs from its compiled JavaScript (dist/, kept current by bin/compile.js: no loader hook,
// no transpiling at each start); from the TypeScript through tsx's loader when no compiled copy can
// be had (TOOLKILN_DEBUG says why), or when TOOLKILN_FROM_SOURCE is set.
import { compiledCli } from './compile.js';

const why = (reason) => process.env.TOOLKILN_DEBUG && process.stderr.write(`toolkiln: running the TypeScript source through tsx: ${reason}\n`);
const compiled = process.env.TOOLKILN_FROM_SOURCE ? null : await compiledCli(undefined, why);
if (!compiled) (await import('tsx/esm/api')).register();
const { main } = await import(compiled ?? './cli.ts');
process.exitCode = await main(process.argv.slice(2));
