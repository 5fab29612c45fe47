import { readdirSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultRun } from './helpers/default-run.ts';
import { hashFileSync } from '../core/hash.ts';
import { sampleToLine, toolToLine } from '../core/line-form.ts';
import type { Manifest } from '../core/records.ts';
import { DatasetStore, type VersionRef } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { hfDatasetName, hfSplitName, sourceLicense } from '../stages/export/hf-card.ts';
import { csvProblems, loadLikeDatasetsJson } from './helpers/datasets-json.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { readParquetRows } from './helpers/parquet-read.ts';
import { wholeVersionPeerRuns } from './helpers/peer-code.ts';
import { loadFilesInPython, pythonHasDatasets } from './helpers/python.ts';

const LOADABLE = ['.json', '.jsonl', '.csv', '.parquet'];

/** Every data file under `dir` a loader may be pointed at (not the manifest), by path. */
function dataFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && LOADABLE.includes(extname(entry.name)) && entry.name !== 'manifest.json')
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** The files among `files` whose bytes differ (the canonical export repeats the published data files byte for byte). */
function distinct(files: string[]): string[] {
  const seen = new Set<string>();
  return files.filter((file) => {
    const hash = hashFileSync(file);
    return !seen.has(hash) && seen.add(hash);
  });
}

/** JSON as a loader sees it (no undefined, no key order of its own). */
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

/**
 * Each recipe's FULL default offline run (one per recipe, shared by its tests), exported to every format
 * its pipeline lists: a block-wise loader only fails on a file longer than its first block (10 MiB).
 */
for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
  describe(`${name}: the full default offline run's published and exported files load as Hugging Face datasets and pandas read them`, () => {
    const run = defaultRun(name);
    let home: string;
    let store: DatasetStore;
    let ref: VersionRef;
    let manifest: Manifest;
    let exportDir: Record<string, string>;
    let files: string[];
    beforeAll(async () => {
      ({ store, ref, manifest, scratch: home } = run);
      const pipeline = pipelines[name];
      exportDir = {};
      for (const [format, exporter] of Object.entries(pipeline.exports)) {
        exportDir[format] = join(home, 'export', format, ...(format === 'hf' ? [hfDatasetName(ref)] : []));
        await exporter(store.sampleSource(ref), store.tools(ref), exportDir[format], ref);
      }
      files = [...dataFiles(ref.dir), ...dataFiles(join(home, 'export'))];
    }, 900_000);

    it('every JSON and JSONL file loads block by block as datasets loads it, the line-form files with no JSON-text or null column, and every CSV file as pandas reads it', () => {
      const lineForm = [join(ref.dir, 'data'), join(ref.dir, 'tools.jsonl'), join(ref.dir, 'rejects.jsonl'), exportDir.canonical];
      const json = distinct(files.filter((file) => ['.json', '.jsonl'].includes(extname(file))));
      expect(json.some((file) => file.startsWith(join(ref.dir, 'data')))).toBe(true);
      const problems: string[] = [];
      for (const file of json) {
        const load = loadLikeDatasetsJson(file);
        problems.push(...load.problems);
        if (lineForm.some((root) => file.startsWith(root))) {
          if (load.jsonColumns.length) problems.push(`${file}: datasets turns ${load.jsonColumns.join(', ')} into JSON text`);
          // A list empty in every row of the first block (ToolE's task-awareness offers no tools) is the one null type left.
          const nulls = load.nullColumns.filter((column) => column !== '/tools/[]');
          if (nulls.length) problems.push(`${file}: the first block types ${nulls.join(', ')} null`);
        }
      }
      // A header, and as many fields on every row.
      problems.push(...files.filter((file) => extname(file) === '.csv').flatMap(csvProblems));
      expect(problems).toEqual([]);
    }, 300_000);

    it('the hf export is Parquet another reader gives back row for row, with a dataset card the Hub reads', () => {
      expect(Object.keys(pipelines[name].exports)).toContain('hf');
      const out = exportDir.hf;
      const { header, body } = readDatasetCard(join(out, 'README.md'));
      const splits = Object.keys(manifest.counts.bySplit);

      // Each split's files as the card's `configs` name them, read back by parquet-wasm.
      const [samplesConfig, toolsConfig] = header.configs;
      expect(samplesConfig).toMatchObject({ config_name: `${name}-v1`, default: true });
      expect(samplesConfig.data_files.map((f: { split: string }) => f.split).sort()).toEqual(splits.map((s) => hfSplitName(s, splits)).sort());
      for (const split of splits) {
        const { path } = samplesConfig.data_files.find((f: { split: string }) => f.split === hfSplitName(split, splits));
        const { rows, schema } = readParquetRows(join(out, path));
        expect(schema).toContain('tools: List<Struct<{name:Utf8');
        expect(rows).toEqual(plain([...store.sampleSource(ref).inSplit(split)].map(sampleToLine)));
      }
      expect(toolsConfig).toEqual({ config_name: `${name}-v1-tools`, data_files: [{ split: 'library', path: 'tools/library-00000-of-00001.parquet' }] });
      expect(readParquetRows(join(out, toolsConfig.data_files[0].path)).rows).toEqual(plain(store.tools(ref).map(toolToLine)));

      // License of the sources, task categories, size.
      const licenses = [...new Set(Object.keys(manifest.sources).map((p) => sourceLicense(p) ?? 'other'))].sort();
      expect([header.license].flat().sort()).toEqual(licenses);
      expect(licenses.some((l) => l !== 'other')).toBe(true);
      expect(header.task_categories).toEqual(['text-generation']);
      expect(header.size_categories).toEqual([manifest.counts.samples < 1000 ? 'n<1K' : manifest.counts.samples < 10_000 ? '1K<n<10K' : '10K<n<100K']);

      // Counts per split and category, the pipeline and config, models, usage, source hashes, how to regenerate.
      for (const split of splits) expect(body).toContain(`| ${hfSplitName(split, splits)} | ${manifest.counts.bySplit[split]} |`);
      for (const [category, count] of Object.entries(manifest.counts.byCategory)) expect(body).toContain(`| ${category} | ${count} |`);
      expect(body).toContain(JSON.stringify(manifest.config, null, 2));
      for (const model of manifest.models) expect(body).toContain(`\`${model}\``);
      expect(body).toContain(`| **total** | ${manifest.usage.total.requests} | ${manifest.usage.total.cached} | ${manifest.usage.total.promptTokens} | ${manifest.usage.total.completionTokens} |`);
      for (const hash of Object.values(manifest.sources)) expect(body).toContain(hash);
      expect(body).toContain(`npx toolkiln run ${name} --config toolkiln-config.json --name ${name} --seed 42 --llm offline`);
      expect(body).toContain(`npx toolkiln export ${name}@<version> --format hf`);
    }, 300_000);

    it.skipIf(!pythonHasDatasets || !wholeVersionPeerRuns)('every file loads in Python with datasets (json, csv, parquet) and pandas, as the TypeScript loader says (npm run test:peers; skipped without python3 with datasets and pandas)', () => {
      const loads = loadFilesInPython(distinct(files));
      expect(loads.filter((load) => load.datasets !== 'ok' || load.pandas !== 'ok')).toEqual([]);
      // The TypeScript loader agrees with datasets on the rows and on the columns kept as JSON text.
      for (const load of loads.filter((l) => ['.json', '.jsonl'].includes(extname(l.file)))) {
        const ts = loadLikeDatasetsJson(load.file);
        expect({ file: relative(home, load.file), rows: ts.rows, json: ts.jsonColumns.sort() }).toEqual({ file: relative(home, load.file), rows: load.rows, json: load.json_columns!.sort() });
      }
    }, 900_000);
  });
}
