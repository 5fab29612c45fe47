import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { AtomicJsonlFile, writeFileAtomic } from '../../core/jsonl.ts';
import type { Exporter } from '../../core/pipeline.ts';
import type { Sample } from '../../core/records.ts';
import { readManifest } from '../../core/store.ts';
import { hfDatasetName, hfSplitName } from './hf-card.ts';
import type { GoldReply } from './openai-chat.ts';
import { SHAREGPT_TAGS, shareGptRowProblems } from './sharegpt-validate.ts';
import { sampleToTrl, thoughtsWithoutCalls, type TrlMessage } from './trl.ts';

/**
 * ShareGPT with tools, as LLaMA-Factory reads it (`formatting: sharegpt`; ms-swift reads the same
 * columns): one row per sample, made from its TRL row (stages/export/trl.ts), with
 *
 * - `conversations`: `{from, value}` messages, `human` for the user, `function_call` for an
 *   assistant message that calls tools (value: `{"name", "arguments"}` as JSON, or a list of them
 *   for parallel calls), `observation` for their results (one call's result as JSON text, several
 *   calls' results as a JSON list in the calls' order: the format has one observation per
 *   function_call), `gpt` for a reply in words;
 * - `tools`: the candidate tools as JSON text of OpenAI-style functions (LLaMA-Factory unwraps
 *   `{type: "function", function: …}`); `[]` for none;
 * - `id` and `category` to trace a row to its sample (LLaMA-Factory drops other columns).
 *
 * A ReAct thought has no place: LLaMA-Factory parses a function_call value as JSON and splits off
 * reasoning only inside its template's thought words, which differ from template to template (the
 * thought of a turn without calls has no place in either format). The export says on stderr how many
 * thoughts it left out. No sample has a system prompt, so there is no
 * `system` column.
 */
export interface ShareGptMessage {
  from: (typeof SHAREGPT_TAGS)[keyof Pick<typeof SHAREGPT_TAGS, 'user_tag' | 'assistant_tag' | 'observation_tag' | 'function_tag'>];
  value: string;
}

export interface ShareGptRow {
  id: string;
  category: string;
  conversations: ShareGptMessage[];
  tools: string;
}

/** A sample's ShareGPT row and how many of its thoughts were left out. */
export function sampleToShareGpt(sample: Sample, goldReply?: GoldReply): { row: ShareGptRow; thoughtsLeftOut: number } {
  const trl = sampleToTrl(sample, { goldReply });
  const conversations: ShareGptMessage[] = [];
  let thoughtsLeftOut = 0;
  let results: string[] = [];
  const flush = () => {
    if (results.length) conversations.push({ from: 'observation', value: results.length === 1 ? results[0] : `[${results.join(',')}]` });
    results = [];
  };
  for (const message of trl.messages) {
    if (message.role === 'tool') {
      results.push(message.content);
      continue;
    }
    flush();
    conversations.push(shareGptMessage(message));
    if (message.tool_calls && message.content) thoughtsLeftOut++;
  }
  flush();
  return { row: { id: trl.id, category: trl.category, conversations, tools: JSON.stringify(trl.tools) }, thoughtsLeftOut: thoughtsLeftOut + thoughtsWithoutCalls(sample) };
}

function shareGptMessage(message: TrlMessage): ShareGptMessage {
  if (message.role === 'user') return { from: 'human', value: message.content };
  if (!message.tool_calls) return { from: 'gpt', value: message.content };
  const calls = message.tool_calls.map((call) => ({ name: call.function.name, arguments: call.function.arguments }));
  return { from: 'function_call', value: JSON.stringify(calls.length === 1 ? calls[0] : calls) };
}

/**
 * `--format sharegpt`: `<split>.jsonl` per split and a `dataset_info.json` with one entry per split
 * (`<name>-<version>-<split>`) that tells LLaMA-Factory the file, the formatting, the columns and the
 * tags; copy the folder's files into LLaMA-Factory's `data/` (or point `dataset_dir` at the folder)
 * and train with `dataset: <name>-<version>-train`. Every row is checked against LLaMA-Factory's
 * rules before it is written (stages/export/sharegpt-validate.ts); one that fails stops the export.
 */
export function shareGptExporter(goldReply?: GoldReply): Exporter {
  return async (samples, _tools, outDir, version, options = {}) => {
    if (!version) throw new UserError('the sharegpt format needs the published version (its name and version name the dataset_info.json entries): export a version with toolkiln export <name>@v --format sharegpt');
    const prefix = hfDatasetName(readManifest(version.dir));
    const info: Record<string, unknown> = {};
    const written: string[] = [];
    let thoughts = 0;
    for (const split of [...samples.splits].sort()) {
      const fileName = `${hfSplitName(split, samples.splits)}.jsonl`;
      const file = new AtomicJsonlFile(join(outDir, fileName));
      try {
        for (const sample of samples.inSplit(split)) {
          const { row, thoughtsLeftOut } = sampleToShareGpt(sample, goldReply);
          const problems = shareGptRowProblems(row);
          if (problems.length) throw new UserError(`sample ${sample.id} (split ${split}) is not a row LLaMA-Factory takes: ${problems.join('; ')}`);
          thoughts += thoughtsLeftOut;
          file.write(row);
        }
      } catch (error) {
        file.discard();
        throw error;
      }
      written.push(file.commit());
      info[`${prefix}-${hfSplitName(split, samples.splits)}`] = {
        file_name: fileName,
        formatting: 'sharegpt',
        columns: { messages: 'conversations', tools: 'tools' },
        tags: SHAREGPT_TAGS,
      };
    }
    writeFileAtomic(join(outDir, 'dataset_info.json'), `${JSON.stringify(info, null, 2)}\n`);
    if (thoughts) options.notice?.(`sharegpt: ${thoughts} thought(s) left out (a function_call value is JSON only; a reply is the turn's text)`);
    return [...written, join(outDir, 'dataset_info.json')];
  };
}

export const exportShareGpt = shareGptExporter();
