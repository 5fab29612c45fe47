#!/usr/bin/env node
// The CLI runs from its compiled JavaScript (dist/, kept current by bin/compile.js: no loader hook,
// no transpiling at each start); from the TypeScript through tsx's loader when no compiled copy can
// be had (TOOLKILN_DEBUG says why), or when TOOLKILN_FROM_SOURCE is set.
import { setFlagsFromString } from 'node:v8';
import { compiledCli } from './compile.js';

// V8 optimises a function once it has run a budget of bytecode. At the default budget a run of ten
// seconds spends about a third of its CPU optimising functions (many more than once) on helper
// threads; at four times the budget it takes 0.87x the CPU and no longer (docs/benchmarks.md, "The
// optimising compiler's budget"). A budget given on node's own command line is kept.
if (!process.execArgv.some((arg) => arg.startsWith('--interrupt-budget'))) setFlagsFromString('--interrupt-budget=270336');

const why = (reason) => process.env.TOOLKILN_DEBUG && process.stderr.write(`toolkiln: running the TypeScript source through tsx: ${reason}\n`);
const compiled = process.env.TOOLKILN_FROM_SOURCE ? null : await compiledCli(undefined, why);
if (!compiled) (await import('tsx/esm/api')).register();
const { main } = await import(compiled ?? './cli.ts');
process.exitCode = await main(process.argv.slice(2));
