import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { readJsonFile } from '../../core/source-files.ts';
import { AnnotatedUtterance, type SlotSpan } from './utterance.ts';

const SnipsSegment = z.object({ text: z.string(), entity: z.string().min(1).optional() });
const SnipsFile = z.record(z.string(), z.array(z.object({ data: z.array(SnipsSegment).min(1) })));

const SNIPS_SHAPE = '{"<Intent>": [{"data": [{"text", "entity"?}]}]}';

export interface SnipsOptions {
  /** Folder holding `train_<Intent>.json` / `validate_<Intent>.json`. */
  dir: string;
  /** File prefixes to read (`train`, `validate`). */
  splits: string[];
}

/** Parses one SNIPS segment file into utterances; a malformed file names the file and utterance. */
export function parseSnipsFile(path: string, split: string): AnnotatedUtterance[] {
  const parsed = SnipsFile.safeParse(readJsonFile(path, { expected: SNIPS_SHAPE }));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`${path}: not SNIPS segment JSON at ${issue.path.join('.')}: ${issue.message} (expected ${SNIPS_SHAPE})`);
  }
  const out: AnnotatedUtterance[] = [];
  for (const [intent, utterances] of Object.entries(parsed.data)) {
    utterances.forEach((utterance, index) => {
      let text = '';
      const slots: SlotSpan[] = [];
      for (const segment of utterance.data) {
        if (segment.entity) slots.push({ name: segment.entity, value: segment.text.trim(), start: text.length + leading(segment.text), end: text.length + segment.text.trimEnd().length });
        text += segment.text;
      }
      if (!text.trim()) throw new UserError(`${path}: ${intent}[${index}] has no text`);
      out.push({ source: 'snips', id: `${basename(path)}#${index}`, file: basename(path), split, text, intents: [intent], slots });
    });
  }
  return out;
}

function leading(text: string): number {
  return text.length - text.trimStart().length;
}

/** Loads the SNIPS custom-intent benchmark (7 intents, train and validate files). */
export function loadSnips(options: SnipsOptions, resolvePath: (p: string) => string): AnnotatedUtterance[] {
  return [...eachSnipsUtterance(options, resolvePath)];
}

/** The SNIPS utterances one file at a time (a file is read whole: one JSON document). */
export function* eachSnipsUtterance(options: SnipsOptions, resolvePath: (p: string) => string): Generator<AnnotatedUtterance> {
  const dir = resolvePath(options.dir);
  // The split keeps the source's name (`train`, `validate`); the recipe's config maps it.
  for (const file of snipsFiles(dir, options)) yield* parseSnipsFile(join(dir, file), file.split('_')[0]);
}

/** The SNIPS files of the configured splits, in name order. */
function snipsFiles(dir: string, options: SnipsOptions): string[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /^(train|validate)_.+\.json$/.test(f)).sort();
  } catch {
    throw new UserError(`SNIPS folder not readable: ${dir} (set sources.snips.dir in the config)`);
  }
  const wanted = files.filter((f) => options.splits.includes(f.split('_')[0]));
  if (!wanted.length) throw new UserError(`${dir}: no SNIPS files for splits ${options.splits.join(', ')} (expected train_<Intent>.json / validate_<Intent>.json)`);
  return wanted;
}

/** SNIPS intent → topic (the SGD topic names, so out-of-domain hold-outs span datasets). */
const SNIPS_TOPICS: Record<string, string> = {
  AddToPlaylist: 'Music',
  PlayMusic: 'Music',
  BookRestaurant: 'Restaurants',
  GetWeather: 'Weather',
  RateBook: 'Books',
  SearchCreativeWork: 'Media',
  SearchScreeningEvent: 'Movies',
};

export function snipsTopic(intent: string): string {
  return SNIPS_TOPICS[intent] ?? intent;
}
