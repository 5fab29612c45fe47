// `npm run bench -- eval [--runs n]`: scoring the released benchmarks with their gold answers as the
// predictions (items built, oracle answers written, scored by the benchmark's rules), against the floor
// of only reading and JSON-parsing the same files (median of n runs). The score must be 1.0 throughout
// (ACEBench: but for the released records whose own gold breaks its rules).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import type { BenchmarkScorer, EvalItem, EvalReport } from '../core/eval.ts';
import { eachJsonl } from '../core/jsonl.ts';
import { pathResolver } from '../core/run.ts';
import { releasedItems, releasedSets } from '../eval/released.ts';
import { timeSync } from './lib/timing.ts';

/** Every file under a folder (the floor reads them all). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile() && /\.(jsonl?|csv)$/.test(f));
}

/** Reads and parses every file: a JSON Lines file line by line, a JSON file whole, a CSV file (MetaTool's) into rows. */
function readAll(files: string[]): number {
  let values = 0;
  for (const file of files) {
    if (file.endsWith('.jsonl')) for (const _ of eachJsonl(file)) values++;
    else if (file.endsWith('.csv')) values += (parse(readFileSync(file, 'utf8'), { columns: true }) as unknown[]).length;
    else {
      // A JSON document (ToolTalk), or JSON lines under a .json name (ACEBench).
      const text = readFileSync(file, 'utf8');
      try {
        JSON.parse(text);
        values++;
      } catch {
        for (const line of text.split('\n')) if (line.trim()) (JSON.parse(line), values++);
      }
    }
  }
  return values;
}

interface Case {
  benchmark: string;
  dir: string;
  scorer: BenchmarkScorer;
  items: () => EvalItem[];
}

const resolvePath = pathResolver(process.cwd(), fileURLToPath(new URL('..', import.meta.url)));

/** Every released set a scorer reads (the ones `eval compare` compares with). */
const CASES: Case[] = releasedSets().map((set) => ({ benchmark: `${set.name} (${set.files})`, dir: resolvePath(set.path), scorer: set.scorer, items: () => releasedItems(set, resolvePath) }));

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '5' } } });
  const runs = Number(values.runs);
  process.stdout.write(`median of ${runs} runs; floor = reading and JSON-parsing the benchmark's released files\n\n`);
  process.stdout.write('| benchmark | items | metrics at their best | score ms | items per s | floor ms | score / floor |\n|---|---:|---|---:|---:|---:|---:|\n');
  for (const c of CASES) {
    const files = filesUnder(c.dir);
    const floor = timeSync(runs, () => readAll(files));
    let report: EvalReport | undefined;
    let count = 0;
    const scored = timeSync(runs, () => {
      const items = c.items();
      count = items.length;
      report = c.scorer.score(items.map((item) => ({ item, output: c.scorer.oracle(item) })));
    });
    // A rate of mistakes (ToolTalk's incorrect action rate) and MetaTool's partial multi-tool rates
    // (one tool of two right) are at their best at 0, every other metric at 1.
    const metrics = Object.entries(report!.metrics);
    const off = metrics.filter(([name, value]) => value !== (/incorrect|^multi-tool_1\//.test(name) ? 0 : 1));
    const best = `${metrics.length - off.length} of ${metrics.length}${off.length ? ` (${off.map(([name, value]) => `${name} ${value.toFixed(4)}`).join(', ')})` : ''}`;
    process.stdout.write(`| ${c.benchmark} | ${count.toLocaleString('en-US')} | ${best} | ${scored.toFixed(0)} | ${Math.round((count / scored) * 1000).toLocaleString('en-US')} | ${floor.toFixed(0)} | ${(scored / floor).toFixed(1)}× |\n`);
  }
}
