// `npm run bench -- eval [--runs n]`: scoring the released benchmarks with their gold answers as the
// predictions (items built, oracle answers written, scored by the benchmark's rules), against the floor
// of only reading and JSON-parsing the same files (median of n runs). The score must be 1.0 throughout
// (ACEBench: but for the released records whose own gold breaks its rules).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchmarkScorer, EvalItem, EvalReport } from '../core/eval.ts';
import { eachJsonl } from '../core/jsonl.ts';
import { acebenchScorer } from '../stages/acebench/score.ts';
import { importAceFolder } from '../stages/acebench/import.ts';
import { mtuScorer, releasedMtuItems } from '../stages/mtu/score.ts';
import { nestoolsScorer } from '../stages/nestools/score.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { conversationFiles } from '../stages/tooltalk/conversation-files.ts';
import { importConversationFile } from '../stages/tooltalk/import.ts';
import { tooltalkScorer } from '../stages/tooltalk/score.ts';
import { timeSync } from './lib/timing.ts';

const REFERENCE = fileURLToPath(new URL('../../shared/data/reference/', import.meta.url));

/** Every file under a folder (the floor reads them all). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile() && /\.jsonl?$/.test(f));
}

/** Reads and parses every file: a JSON Lines file line by line, a JSON file whole. */
function readAll(files: string[]): number {
  let values = 0;
  for (const file of files) {
    if (file.endsWith('.jsonl')) for (const _ of eachJsonl(file)) values++;
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

const CASES: Case[] = [
  { benchmark: 'MTU-Bench (MTU-Eval, 5 files)', dir: join(REFERENCE, 'mtu-bench'), scorer: mtuScorer, items: () => releasedMtuItems(join(REFERENCE, 'mtu-bench')) },
  { benchmark: 'NesTools (test_data)', dir: join(REFERENCE, 'nestools'), scorer: nestoolsScorer, items: () => loadNesToolsSamples(join(REFERENCE, 'nestools/test_data.jsonl')).flatMap((s) => nestoolsScorer.items(s)) },
  {
    benchmark: 'ToolTalk (78 conversations)',
    dir: join(REFERENCE, 'tooltalk'),
    scorer: tooltalkScorer,
    items: () => conversationFiles(join(REFERENCE, 'tooltalk')).flatMap((file) => tooltalkScorer.items(importConversationFile(join(REFERENCE, 'tooltalk'), file))),
  },
  { benchmark: 'ACEBench (en + zh)', dir: join(REFERENCE, 'acebench'), scorer: acebenchScorer, items: () => [...importAceFolder(join(REFERENCE, 'acebench'))].flatMap((s) => acebenchScorer.items(s)) },
];

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
    // A rate of mistakes (ToolTalk's incorrect action rate) is at its best at 0, every other metric at 1.
    const metrics = Object.entries(report!.metrics);
    const off = metrics.filter(([name, value]) => value !== (/incorrect/.test(name) ? 0 : 1));
    const best = `${metrics.length - off.length} of ${metrics.length}${off.length ? ` (${off.map(([name, value]) => `${name} ${value.toFixed(4)}`).join(', ')})` : ''}`;
    process.stdout.write(`| ${c.benchmark} | ${count.toLocaleString('en-US')} | ${best} | ${scored.toFixed(0)} | ${Math.round((count / scored) * 1000).toLocaleString('en-US')} | ${floor.toFixed(0)} | ${(scored / floor).toFixed(1)}× |\n`);
  }
}
