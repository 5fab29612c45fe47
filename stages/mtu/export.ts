import { join } from 'node:path';
import { compareStrings } from '../../core/collections.ts';
import { AtomicJsonlFile } from '../../core/jsonl.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import { inOrder, orderOf, type SampleSource } from '../../core/sample-source.ts';
import { versionInstructionTemplates } from './instructions.ts';
import { toMtuRecords } from './mtu-format.ts';
import { DEFAULT_TODAY, mtuMeta } from './sample.ts';


/** File a sample's records go to: `<setting>_eval.jsonl` (test), `OOD_eval.jsonl`, `<setting>_train.jsonl`. */
function fileOf(sample: Sample): string {
  if (sample.split === 'ood') return 'OOD_eval.jsonl';
  return `${sample.category}_${sample.split === 'test' ? 'eval' : sample.split}.jsonl`;
}

/**
 * MTU-Bench's own format, as the released MTU-Eval files: `{id, question, answer}` per answered
 * user turn, one file per setting and split, written in the instruction templates the version was
 * published with (reports/mtu-instructions.json). `index.jsonl` maps every record to its sample and
 * lists the hard-set rules it meets (the released files mix normal and hard records the same way).
 */
export async function exportMtu(samples: SampleSource, _tools: ToolSpec[], outDir: string, version?: { dir: string }): Promise<string[]> {
  const instructions = versionInstructionTemplates(version?.dir);
  // Samples by file, by id within a file: each file is written in one pass, one file at a time.
  const order = orderOf(samples, (s) => ({ file: fileOf(s), id: s.id }), (a, b) => compareStrings(a.file, b.file) || compareStrings(a.id, b.id));
  const index = new AtomicJsonlFile(join(outDir, 'index.jsonl'));
  const written: string[] = [];
  let current: { file: string; out: AtomicJsonlFile; n: number } | undefined;
  try {
    for (const { sample, key } of inOrder(samples, order)) {
      if (current?.file !== key.file) {
        if (current) written.push(current.out.commit());
        current = { file: key.file, out: new AtomicJsonlFile(join(outDir, key.file)), n: 0 };
      }
      const meta = mtuMeta(sample);
      for (const record of toMtuRecords(sample, current.n++, typeof meta.today === 'string' ? meta.today : DEFAULT_TODAY, instructions)) {
        current.out.write(record);
        index.write({ id: record.id, file: key.file, sample: sample.id, split: sample.split, category: sample.category, hard: meta.hard ?? [] });
      }
    }
    if (current) written.push(current.out.commit());
  } catch (error) {
    current?.out.discard();
    index.discard();
    throw error;
  }
  return [...written, index.commit()];
}
