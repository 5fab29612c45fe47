import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleToLine, toolToLine } from '../core/line-form.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Manifest } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore, type VersionRef } from '../core/store.ts';
import { pipelines } from '../pipelines/index.ts';
import { exportCanonical } from '../stages/export/canonical.ts';
import { exportHuggingFace } from '../stages/export/hf.ts';
import { hfSplitName, sourceLicense } from '../stages/export/hf-card.ts';
import { arrowShapeProblems } from './helpers/arrow-shape.ts';
import { readDatasetCard } from './helpers/dataset-card.ts';
import { readParquetRows } from './helpers/parquet-read.ts';

const PROJECT = new URL('..', import.meta.url).pathname;

/** Every JSONL file under `dir`, by path. */
function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** JSON as a loader sees it (no undefined, no key order of its own). */
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
  describe(`${name}: a small offline run's published files and exports load in columnar tools`, () => {
    let home: string;
    let store: DatasetStore;
    let ref: VersionRef;
    let manifest: Manifest;
    beforeAll(async () => {
      home = mkdtempSync(join(tmpdir(), `tk-loadable-${name}-`));
      const result = await runPipeline({ pipeline: pipelines[name], llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, limit: 40, progress: { quiet: true } });
      store = new DatasetStore(home);
      ref = result.ref!;
      manifest = result.manifest!;
    }, 600_000);
    afterAll(() => rmSync(home, { recursive: true, force: true }));

    it('every published file and canonical export has one Arrow schema: every key in every record, one type per value', async () => {
      const out = join(home, 'canonical');
      await exportCanonical(store.sampleSource(ref), store.tools(ref), out);
      const files = [...jsonlFiles(ref.dir), ...jsonlFiles(out)];
      expect(files.some((f) => f.startsWith(join(ref.dir, 'data')))).toBe(true);
      expect(files).toContain(join(ref.dir, 'tools.jsonl'));
      // A version with rejects lists them; without, it has no (empty) rejects file.
      expect(existsSync(join(ref.dir, 'rejects.jsonl'))).toBe(manifest.counts.rejects > 0);
      expect(files.flatMap(arrowShapeProblems)).toEqual([]);
    });

    it('the hf export is Parquet another reader gives back row for row, with a dataset card the Hub reads', async () => {
      expect(Object.keys(pipelines[name].exports)).toContain('hf');
      const out = join(home, 'hf');
      await exportHuggingFace(store.sampleSource(ref), store.tools(ref), out, ref);
      const { header, body } = readDatasetCard(join(out, 'README.md'));
      const splits = Object.keys(manifest.counts.bySplit);

      // Each split's files as the card's `configs` name them, read back by parquet-wasm.
      const [samplesConfig, toolsConfig] = header.configs;
      expect(samplesConfig).toMatchObject({ config_name: 'default', default: true });
      expect(samplesConfig.data_files.map((f: { split: string }) => f.split).sort()).toEqual(splits.map((s) => hfSplitName(s, splits)).sort());
      for (const split of splits) {
        const { path } = samplesConfig.data_files.find((f: { split: string }) => f.split === hfSplitName(split, splits));
        const { rows, schema } = readParquetRows(join(out, path));
        expect(schema).toContain('tools: List<Struct<{name:Utf8');
        expect(rows).toEqual(plain([...store.sampleSource(ref).inSplit(split)].map(sampleToLine)));
      }
      expect(toolsConfig).toEqual({ config_name: 'tools', data_files: [{ split: 'library', path: 'tools/library-00000-of-00001.parquet' }] });
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
      expect(body).toContain(`toolkiln run ${name} --config toolkiln-config.json --name ${name} --seed 42 --limit 40 --llm offline`);
      expect(body).toContain(`toolkiln export ${name}@<version> --format hf`);
    });
  });
}
