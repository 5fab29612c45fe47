import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { readJsonFile } from '../../core/source-files.ts';
import type { SourceDialogue } from './dialogue.ts';
import { dialogueFiles, parseDialogueFile, parseSchemaFile, type ServiceSchemas } from './sgd.ts';

/**
 * MultiWOZ 2.2: an SGD-style `schema.json` (8 domains, intents such as `find_hotel`), the domain
 * databases `db/<domain>_db.json`, and — when the user has them — dialogues in SGD format
 * (`<dialogues>/<split>/dialogues_NNN.json`). MultiWOZ has no service calls: the tool creation
 * derives them from the dialogue state, and observations come from the databases.
 */

export interface MultiwozOptions {
  /** Folder with `schema.json` and `db/`. */
  dir: string;
  /** Folder of SGD-format dialogues with one sub-folder per split; none shipped by default. */
  dialogues?: string;
  splits: string[];
}

export type MultiwozDb = Record<string, Record<string, Json>[]>;

/** MultiWOZ domain → topic (the SGD topic names, so hold-outs span both datasets). */
const TOPICS: Record<string, string> = {
  hotel: 'Hotels',
  restaurant: 'Restaurants',
  train: 'Trains',
  attraction: 'Travel',
  taxi: 'RideSharing',
  bus: 'Buses',
  hospital: 'Hospital',
  police: 'Police',
};

export function multiwozTopic(service: string): string {
  return TOPICS[service] ?? service[0].toUpperCase() + service.slice(1);
}

/** Database fields that are internal to MultiWOZ, not results a tool would return. */
const HIDDEN_FIELDS = new Set(['id', 'location', 'introduction', 'signature', 'takesbookings']);

export function loadMultiwozDb(dir: string): MultiwozDb {
  const folder = join(dir, 'db');
  if (!existsSync(folder)) throw new UserError(`MultiWOZ database folder not found: ${folder}`);
  const db: MultiwozDb = {};
  for (const file of readdirSync(folder).filter((f) => f.endsWith('_db.json')).sort()) {
    const path = join(folder, file);
    const rows = readJsonFile(path, { expected: 'a JSON list of database rows' });
    if (!Array.isArray(rows)) throw new UserError(`${path}: expected a JSON list of rows`);
    const bad = rows.findIndex((row) => !row || typeof row !== 'object' || Array.isArray(row));
    if (bad !== -1) throw new UserError(`${path}: row ${bad} is not a JSON object`);
    db[file.replace(/_db\.json$/, '')] = rows as Record<string, Json>[];
  }
  return db;
}

/** Result fields of a domain's intents: the database columns (a booking adds its reference). */
function resultFields(db: MultiwozDb, service: string, transactional: boolean): string[] {
  const rows = db[service] ?? [];
  let fields: string[];
  if (service === 'taxi') fields = ['type', 'phone'];
  else fields = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter((f) => !HIDDEN_FIELDS.has(f));
  return transactional ? [...fields, 'reference'] : fields;
}

/** The schema with result slots filled from the databases (MultiWOZ's schema has none). */
export function multiwozSchemas(dir: string, db: MultiwozDb): ServiceSchemas {
  const schemas = parseSchemaFile(join(dir, 'schema.json'));
  for (const [service, intents] of schemas) {
    for (const intent of intents) {
      if (intent.result.length) continue;
      intent.result = resultFields(db, service, intent.transactional);
      const known = new Set(intent.slots.map((s) => s.name));
      for (const name of intent.result) if (!known.has(name)) intent.slots.push({ name, description: '', categorical: false, values: [] });
    }
  }
  return schemas;
}

/** The configured MultiWOZ splits' dialogues, one dialogues file at a time. */
export function* eachMultiwozDialogue(options: MultiwozOptions, resolvePath: (p: string) => string): Generator<SourceDialogue> {
  if (!options.dialogues) return;
  const dir = resolvePath(options.dir);
  const schemas = multiwozSchemas(dir, loadMultiwozDb(dir));
  const root = resolvePath(options.dialogues);
  if (!existsSync(root)) throw new UserError(`MultiWOZ dialogue folder not found: ${root} (sources.multiwoz.dialogues)`);
  for (const split of options.splits) {
    const folder = join(root, split);
    if (!existsSync(folder)) continue;
    for (const path of dialogueFiles(folder)) yield* parseDialogueFile(path, { source: 'multiwoz', split, schemas, topicOf: multiwozTopic, database: 'multiwoz' });
  }
}

/** Loads the configured MultiWOZ splits as a list (see `eachMultiwozDialogue`). */
export function loadMultiwoz(options: MultiwozOptions, resolvePath: (p: string) => string): SourceDialogue[] {
  return [...eachMultiwozDialogue(options, resolvePath)];
}

// ---------------------------------------------------------------- database lookups

function norm(value: Json | undefined): string {
  return String(value ?? '')
    .toLowerCase()
    .replace(/^the\s+/, '')
    .trim();
}

/** Column of a row that a parameter names (`leaveat` → `leaveAt`), case-insensitively. */
function column(row: Record<string, Json>, parameter: string): string | undefined {
  const wanted = parameter.replace(/_/g, '').toLowerCase();
  return Object.keys(row).find((key) => key.replace(/[_ ]/g, '').toLowerCase() === wanted);
}

function matches(row: Record<string, Json>, args: Record<string, string>): boolean {
  for (const [parameter, value] of Object.entries(args)) {
    if (!value || value === 'dontcare') continue;
    const key = column(row, parameter);
    if (!key) continue; // booking details (day, people, stay) are not columns
    const have = norm(row[key]);
    if (parameter === 'leaveat') {
      if (have < norm(value)) return false;
    } else if (parameter === 'arriveby') {
      if (have > norm(value)) return false;
    } else if (have !== norm(value)) return false;
  }
  return true;
}

function reference(rng: Rng): string {
  const letters = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
  return Array.from({ length: 8 }, () => rng.pick([...letters])).join('');
}

/**
 * Looks a call up in the MultiWOZ databases: a search returns the first matching row (without
 * internal fields), `{}` when none matches; a booking returns the matched row plus a reference
 * number; a taxi booking draws a car and phone from the taxi table.
 */
export function lookupMultiwoz(db: MultiwozDb, service: string, intent: { name: string; transactional: boolean }, args: Record<string, string>, rng: Rng): Record<string, Json> {
  if (service === 'taxi') {
    const taxi = (db.taxi?.[0] ?? {}) as { taxi_colors?: string[]; taxi_types?: string[] };
    const phone = Array.from({ length: 10 }, () => String(rng.int(0, 9))).join('');
    return { type: `${rng.pick(taxi.taxi_colors ?? ['black'])} ${rng.pick(taxi.taxi_types ?? ['toyota'])}`, phone, reference: reference(rng) };
  }
  const row = (db[service] ?? []).find((r) => matches(r, args));
  if (!row) return {};
  const result = Object.fromEntries(Object.entries(row).filter(([key]) => !HIDDEN_FIELDS.has(key)));
  return intent.transactional ? { ...result, reference: reference(rng) } : result;
}
