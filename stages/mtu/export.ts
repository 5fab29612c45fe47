import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { byString, groupBy } from '../../core/collections.ts';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import { toMtuRecords } from './mtu-format.ts';
import { mtuMeta } from './sample.ts';

const DEFAULT_TODAY = '2019-03-01';

/** File a sample's records go to: `<setting>_eval.jsonl` (test), `OOD_eval.jsonl`, `<setting>_train.jsonl`. */
function fileOf(sample: Sample): string {
  if (sample.split === 'ood') return 'OOD_eval.jsonl';
  return `${sample.category}_${sample.split === 'test' ? 'eval' : sample.split}.jsonl`;
}

/**
 * MTU-Bench's own format, as the released MTU-Eval files: `{id, question, answer}` per answered
 * user turn, one file per setting and split. `index.jsonl` maps every record to its sample and
 * lists the hard-set rules it meets (the released files mix normal and hard records the same way).
 */
export async function exportMtu(samples: Sample[], _tools: ToolSpec[], outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  const index: unknown[] = [];
  for (const [file, group] of [...groupBy(samples, fileOf)].sort(byString(([f]) => f))) {
    const records: unknown[] = [];
    [...group].sort(byString((s) => s.id)).forEach((sample, n) => {
      const meta = mtuMeta(sample);
      for (const record of toMtuRecords(sample, n, typeof meta.today === 'string' ? meta.today : DEFAULT_TODAY)) {
        records.push(record);
        index.push({ id: record.id, file, sample: sample.id, split: sample.split, category: sample.category, hard: meta.hard ?? [] });
      }
    });
    // Written through a buffer, never as one string (a large version's files pass V8's string limit).
    writeJsonlAtomic(join(outDir, file), records);
    written.push(join(outDir, file));
  }
  writeJsonlAtomic(join(outDir, 'index.jsonl'), index);
  return [...written, join(outDir, 'index.jsonl')];
}
