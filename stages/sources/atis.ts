import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import type { AnnotatedUtterance, SlotSpan } from './utterance.ts';

export interface AtisOptions {
  /** Folder holding one sub-folder per split, each with `seq.in`, `seq.out` and `label`. */
  dir: string;
  splits: string[];
}

const TAG = /^(O|[BI]-\S+)$/;

/**
 * Decodes BIO tags over tokens into exact character spans of the space-joined text: a `B-x`
 * opens a span, an `I-x` continues the open `x` span, `O` closes it. An `I-x` that follows no
 * open `x` span (a tagging slip some ATIS lines have) opens a new span, as conlleval reads it.
 */
export function decodeBio(tokens: string[], tags: string[]): { text: string; slots: SlotSpan[] } {
  if (tokens.length !== tags.length) throw new Error(`${tags.length} tags for ${tokens.length} tokens`);
  const slots: SlotSpan[] = [];
  const starts: number[] = [];
  let offset = 0;
  for (const token of tokens) {
    starts.push(offset);
    offset += token.length + 1;
  }
  const text = tokens.join(' ');
  let open: SlotSpan | null = null;
  tags.forEach((tag, i) => {
    const end = starts[i] + tokens[i].length;
    if (tag === 'O') {
      open = null;
      return;
    }
    const kind = tag[0];
    const name = tag.slice(2);
    if (kind === 'I' && open && open.name === name) {
      open.end = end;
      open.value = text.slice(open.start, end);
      return;
    }
    open = { name, value: tokens[i], start: starts[i], end };
    slots.push(open);
  });
  return { text, slots };
}

function readLines(path: string): string[] {
  if (!existsSync(path)) throw new UserError(`ATIS file missing: ${path} (each split folder needs seq.in, seq.out and label)`);
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Reads one ATIS split folder; a count mismatch or bad tag names the file and line. */
export function parseAtisSplit(dir: string, split: string): AnnotatedUtterance[] {
  const folder = join(dir, split);
  const inputs = readLines(join(folder, 'seq.in'));
  const outputs = readLines(join(folder, 'seq.out'));
  const labels = readLines(join(folder, 'label'));
  if (inputs.length !== outputs.length || inputs.length !== labels.length) {
    throw new UserError(`${folder}: seq.in has ${inputs.length} lines, seq.out ${outputs.length}, label ${labels.length}; the three files must be parallel (one utterance per line)`);
  }
  return inputs.map((line, i) => {
    const where = (file: string) => `${join(folder, file)}:${i + 1}`;
    const tokens = line.trim().split(/\s+/).filter(Boolean);
    const tags = outputs[i].trim().split(/\s+/).filter(Boolean);
    if (!tokens.length) throw new UserError(`${where('seq.in')}: empty utterance`);
    if (tokens.length !== tags.length) {
      throw new UserError(`${where('seq.out')}: ${tags.length} tags for ${tokens.length} tokens in seq.in; every token needs exactly one BIO tag`);
    }
    const badTag = tags.findIndex((tag) => !TAG.test(tag));
    if (badTag !== -1) throw new UserError(`${where('seq.out')}: tag ${badTag + 1} "${tags[badTag]}" is not BIO (O, B-<slot> or I-<slot>)`);
    const label = labels[i].trim();
    const intents = label.split('#').map((s) => s.trim());
    if (!label || intents.some((s) => !s)) throw new UserError(`${where('label')}: empty intent in "${labels[i]}"`);
    const { text, slots } = decodeBio(tokens, tags);
    return { source: 'atis', id: `${split}/${i + 1}`, file: `${split}/seq.in`, split, text, intents, slots };
  });
}

/** Loads the configured ATIS splits (train / valid / test). */
export function loadAtis(options: AtisOptions, resolvePath: (p: string) => string): AnnotatedUtterance[] {
  const dir = resolvePath(options.dir);
  if (!existsSync(dir)) throw new UserError(`ATIS folder not found: ${dir} (set sources.atis.dir in the config)`);
  return options.splits.flatMap((split) => parseAtisSplit(dir, split));
}

/** Every ATIS intent is about air travel. */
export function atisTopic(_intent: string): string {
  return 'Flights';
}
