import { renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { compareStrings } from '../../core/collections.ts';
import { UserError } from '../../core/errors.ts';
import { JsonlWriter } from '../../core/jsonl.ts';
import type { ExportOptions } from '../../core/pipeline.ts';
import type { Sample, ToolSpec } from '../../core/records.ts';
import { inOrder, orderOf, type SampleSource } from '../../core/sample-source.ts';
import { aceMetaOf, aceRecordLines } from './format.ts';
import { ACE_CATEGORIES, aceFileName } from './record.ts';
import { RELEASED_CLASS_NAMES } from './sandbox/sandbox.ts';

/**
 * `--format acebench`: the released layout, `data_<lang>/data_<category>.json` and
 * `data_<lang>/possible_answer/data_<category>.json`, one JSON line per record as ACEBench's Python
 * wrote them (see `aceRecordLines`), records in id order with numbers compared as numbers
 * (`…_2_1` before `…_10_0`), as the release orders them. A record without an answer gets no answer
 * line. Two samples with one id in one file stop the export before anything is written.
 *
 * An agent record over a class of toolkiln's own (`Finance`) is left out unless `keepExtensions`:
 * ACEBench's harness loads only its own classes (a `KeyError` that stops its generate.py run). What
 * is left out is counted and told through `options.notice`.
 */
export async function exportAceBench(samples: SampleSource, _tools: ToolSpec[], outDir: string, _version?: { dir: string }, options: ExportOptions = {}): Promise<string[]> {
  const leftOut = new Map<string, number>();
  const included = (sample: Sample) => {
    const extra = options.keepExtensions ? [] : extensionClasses(sample);
    for (const name of extra) leftOut.set(name, (leftOut.get(name) ?? 0) + 1);
    return extra.length === 0;
  };
  const order = orderOf(samples, (sample) => ({ ...fileAndId(sample), included: included(sample) }), (a, b) => compareStrings(a.file, b.file) || compareIds(a.id, b.id)).filter((entry) => entry.key.included);
  const twice = order.find((entry, i) => i > 0 && order[i - 1].key.file === entry.key.file && order[i - 1].key.id === entry.key.id);
  if (twice) throw new UserError(`${twice.key.file}: two samples have the released id ${twice.key.id}; give one of them another id (meta.acebench.id)`);
  const written: string[] = [];
  let current: { file: string; data: LineFile; answers: LineFile } | undefined;
  const commit = () => {
    if (!current) return;
    written.push(current.data.commit());
    if (current.answers.count) written.push(current.answers.commit());
    else current.answers.discard();
  };
  try {
    for (const { sample, key } of inOrder(samples, order)) {
      if (current?.file !== key.file) {
        commit();
        const answerFile = key.file.replace(/[^/\\]+$/, (name) => join('possible_answer', name));
        current = { file: key.file, data: new LineFile(join(outDir, key.file)), answers: new LineFile(join(outDir, answerFile)) };
      }
      const meta = aceMetaOf(sample);
      const lines = aceRecordLines(sample);
      current.data.write(lines.data, !!meta.unterminated.data);
      if (lines.answer !== null) current.answers.write(lines.answer, !!meta.unterminated.answer);
    }
    commit();
  } catch (error) {
    current?.data.discard();
    current?.answers.discard();
    throw error;
  }
  const left = [...leftOut.values()].reduce((a, b) => a + b, 0);
  if (left) options.notice?.(`acebench: ${left} agent record(s) left out: they use ${[...leftOut.keys()].join(', ')}, toolkiln's own class(es), which ACEBench's harness cannot load; --keep-extensions writes them`);
  return written;
}

/**
 * The classes an agent record involves that ACEBench's harness cannot load (it loads each class of
 * `involved_classes` by name; the names in the states are only compared, and the release itself
 * misspells some there: `ReminderAPI`, `Baspi`).
 */
export function extensionClasses(sample: Sample): string[] {
  const involved = aceMetaOf(sample).fields.involved_classes;
  const names = Array.isArray(involved) ? involved.filter((name): name is string => typeof name === 'string') : [];
  return names.filter((name) => !(RELEASED_CLASS_NAMES as readonly string[]).includes(name));
}

/** The released file a sample goes to, and its released id; a sample of another category is an error. */
function fileAndId(sample: Sample): { file: string; id: string } {
  if (!(ACE_CATEGORIES as readonly string[]).includes(sample.category)) throw new UserError(`sample ${sample.id}: category "${sample.category}" is not an ACEBench category; fix it before exporting`);
  const meta = aceMetaOf(sample);
  return { file: join(`data_${meta.language}`, aceFileName(sample.category as (typeof ACE_CATEGORIES)[number])), id: meta.id };
}

/**
 * One JSON Lines file written to a temporary name and renamed into place. The release ends every
 * line with a line break except, in one file, the last: a last line marked unterminated is written
 * without it.
 */
class LineFile {
  private readonly tmp: string;
  private writer: JsonlWriter | null = null;
  private lastUnterminated = false;
  count = 0;

  constructor(private readonly path: string) {
    this.tmp = `${path}.tmp-${process.pid}`;
  }

  write(line: string, unterminated: boolean): void {
    this.writer ??= new JsonlWriter(this.tmp);
    this.writer.writeText(line);
    this.lastUnterminated = unterminated;
    this.count++;
  }

  commit(): string {
    this.writer?.close();
    this.writer = null;
    if (this.lastUnterminated) truncateSync(this.tmp, statSync(this.tmp).size - 1);
    renameSync(this.tmp, this.path);
    return this.path;
  }

  discard(): void {
    try {
      this.writer?.close();
    } finally {
      this.writer = null;
      rmSync(this.tmp, { force: true });
    }
  }
}

/** Ids compared with their runs of digits as numbers: `x_2_1` < `x_10_0`. */
export function compareIds(a: string, b: string): number {
  const left = a.match(/\d+|\D+/g) ?? [];
  const right = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const [x, y] = [left[i], right[i]];
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    const order = numeric ? Number(x) - Number(y) || x.length - y.length : x < y ? -1 : x > y ? 1 : 0;
    if (order) return order;
  }
  return left.length - right.length;
}
