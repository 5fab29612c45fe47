import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { readLines } from '../../core/source-files.ts';
import type { AnnotatedUtterance, SlotSpan } from './utterance.ts';

export interface AtisOptions {
  /** Folder holding one sub-folder per split, each with `seq.in`, `seq.out` and `label`. */
  dir: string;
  splits: string[];
  /**
   * Read an `I-x` that continues no `x` span as `B-x` (conlleval's reading), for corpora tagged
   * that way. Off (the default), such a tag is an error naming its file and line.
   */
  lenientBio?: boolean;
}

const TAG = /^(O|[BI]-\S+)$/;

/**
 * Decodes BIO tags over tokens into exact character spans of the space-joined text: a `B-x`
 * opens a span, an `I-x` continues the open `x` span, `O` closes it. An `I-x` that follows no
 * open `x` span opens a new span, as conlleval reads it (the loader refuses such tags unless
 * told to read them so: see `orphanInsideTag`).
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

/** Index of the first `I-x` tag with no open `x` span before it (no `B-x` or `I-x` right before), or -1. */
export function orphanInsideTag(tags: string[]): number {
  return tags.findIndex((tag, i) => tag.startsWith('I-') && (i === 0 || tags[i - 1].slice(2) !== tag.slice(2)));
}

/** The lines of the three parallel files of a split folder, read together one line at a time. */
function* parallelLines(folder: string, split: string): Generator<[string, string, string]> {
  const paths = ['seq.in', 'seq.out', 'label'].map((file) => join(folder, file));
  for (const path of paths) if (!existsSync(path)) throw new UserError(`ATIS file missing: ${path} (each split folder needs seq.in, seq.out and label)`);
  const files = paths.map((path) => readLines(path));
  try {
    yield* zipped(files, folder, split);
  } finally {
    for (const file of files) file.return(undefined);
  }
}

function* zipped(files: Generator<{ text: string }>[], folder: string, split: string): Generator<[string, string, string]> {
  for (let count = 0; ; count++) {
    const next = files.map((file) => file.next());
    if (next.every((line) => !line.done)) {
      yield next.map((line) => (line.value as { text: string }).text) as [string, string, string];
      continue;
    }
    if (next.some((line) => !line.done)) {
      // Counted to the end, for the message.
      const rest = (file: Generator<unknown>) => {
        let n = 0;
        for (const _ of file) n++;
        return n;
      };
      const [inputs, outputs, labels] = next.map((line, k) => count + (line.done ? 0 : 1 + rest(files[k])));
      throw new UserError(`${folder}: seq.in has ${inputs} lines, seq.out ${outputs}, label ${labels}; the three files must be parallel (one utterance per line)`);
    }
    if (!count) throw new UserError(`${folder}: seq.in, seq.out and label are empty; an ATIS split needs one utterance per line (or leave "${split}" out of sources.atis.splits)`);
    return;
  }
}

/** Reads one ATIS split folder, one utterance at a time; a count mismatch or bad tag names the file and line. */
export function* parseAtisSplit(dir: string, split: string, options: { lenientBio?: boolean } = {}): Generator<AnnotatedUtterance> {
  const folder = join(dir, split);
  let i = 0;
  for (const [line, output, labelLine] of parallelLines(folder, split)) {
    yield utteranceOf(line, output, labelLine, i++);
  }

  function utteranceOf(line: string, output: string, labelLine: string, i: number): AnnotatedUtterance {
    const where = (file: string) => `${join(folder, file)}:${i + 1}`;
    const tokens = line.trim().split(/\s+/).filter(Boolean);
    const tags = output.trim().split(/\s+/).filter(Boolean);
    if (!tokens.length) throw new UserError(`${where('seq.in')}: empty utterance`);
    if (tokens.length !== tags.length) {
      throw new UserError(`${where('seq.out')}: ${tags.length} tags for ${tokens.length} tokens in seq.in; every token needs exactly one BIO tag`);
    }
    const badTag = tags.findIndex((tag) => !TAG.test(tag));
    if (badTag !== -1) throw new UserError(`${where('seq.out')}: tag ${badTag + 1} "${tags[badTag]}" is not BIO (O, B-<slot> or I-<slot>)`);
    const orphan = options.lenientBio ? -1 : orphanInsideTag(tags);
    if (orphan !== -1) {
      const slot = tags[orphan].slice(2);
      throw new UserError(
        `${where('seq.out')}: tag ${orphan + 1} "${tags[orphan]}" continues no ${slot} slot (no B-${slot} before it); tag it B-${slot}, or set sources.atis.lenientBio to true to read such tags as B-`,
      );
    }
    const label = labelLine.trim();
    const intents = label.split('#').map((s) => s.trim());
    if (!label || intents.some((s) => !s)) throw new UserError(`${where('label')}: empty intent in "${labelLine}"`);
    const { text, slots } = decodeBio(tokens, tags);
    return { source: 'atis', id: `${split}/${i + 1}`, file: `${split}/seq.in`, split, text, intents, slots };
  }
}

/** The configured ATIS splits (train / valid / test), one utterance at a time (a split's files are never held whole). */
export function* eachAtisUtterance(options: AtisOptions, resolvePath: (p: string) => string): Generator<AnnotatedUtterance> {
  const dir = resolvePath(options.dir);
  if (!existsSync(dir)) throw new UserError(`ATIS folder not found: ${dir} (set sources.atis.dir in the config)`);
  for (const split of options.splits) yield* parseAtisSplit(dir, split, { lenientBio: options.lenientBio });
}

/** Loads the configured ATIS splits as a list (see `eachAtisUtterance`). */
export function loadAtis(options: AtisOptions, resolvePath: (p: string) => string): AnnotatedUtterance[] {
  return [...eachAtisUtterance(options, resolvePath)];
}

/** Every ATIS intent is about air travel. */
export function atisTopic(_intent: string): string {
  return 'Flights';
}
