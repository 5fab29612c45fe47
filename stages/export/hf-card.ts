import { basename } from 'node:path';
import { stringify } from 'yaml';
import { UserError } from '../../core/errors.ts';
import { describeThresholds, overlapMarkdown } from '../../core/overlap/format.ts';
import type { OverlapSummary } from '../../core/overlap/gate.ts';
import type { Manifest, Usage } from '../../core/records.ts';

/**
 * The Hugging Face dataset card (`README.md`) of an `hf` export: a YAML header the Hub reads
 * (license, task categories, size, and `configs` naming each split's files) and a body that tells
 * what the dataset is, how many samples each split and category has, how it was made (pipeline,
 * config, stages, models, token usage and cost, source files with their hashes and licenses) and
 * how to make it again with toolkiln. Nothing in it varies between two exports of one version.
 */

/**
 * Licenses of the inputs toolkiln ships with (../shared/data/README.md and each folder's LICENSE),
 * by a folder in the source's path, as Hub license ids.
 */
const SOURCE_LICENSES: [folder: string, license: string][] = [
  ['sources/snips', 'cc0-1.0'],
  ['sources/sgd', 'cc-by-sa-4.0'],
  ['sources/multiwoz', 'mit'],
  ['sources/metatool', 'mit'],
  ['sources/nestools', 'apache-2.0'],
  ['sources/seal-tools', 'apache-2.0'],
  ['sources/tooltalk', 'mit'],
  ['reference/mtu-bench', 'apache-2.0'],
  ['reference/metatool', 'mit'],
  ['reference/tooltalk', 'mit'],
  ['reference/acebench', 'mit'],
  ['reference/nestools', 'apache-2.0'],
  ['reference/seal-tools', 'apache-2.0'],
];

/** A source path's license id, or null when toolkiln does not know it (ATIS has no license file; a user's own files). */
export function sourceLicense(path: string): string | null {
  const normalised = `/${path.replaceAll('\\', '/')}/`;
  return SOURCE_LICENSES.find(([folder]) => normalised.includes(`/${folder}/`))?.[1] ?? null;
}

/** A split's name as the Hub takes it (letters, digits and `_`): `task-awareness` → `task_awareness`. */
export function hfSplitName(split: string, splits: readonly string[]): string {
  const name = split.replace(/\W/g, '_');
  const clash = splits.find((other) => other !== split && other.replace(/\W/g, '_') === name);
  if (clash) throw new UserError(`splits "${split}" and "${clash}" both become "${name}" on the Hugging Face Hub, which takes only letters, digits and _ in a split name; rename one of them`);
  return name;
}

/**
 * The name of an hf export's default folder and of its card's sample config: the dataset and its
 * version (`mtu-v1`; the tool library's config is `mtu-v1-tools`). `datasets.load_dataset(<folder>)`
 * keys its cache on the folder's name, the config's name and a hash of the card's `configs`, which
 * hold only relative file names: two exports named alike (every default folder was `…/export/hf`,
 * every config `default`) share one cache entry, and the second load returns the first one's rows.
 */
export function hfDatasetName(ref: { name: string; version: string }): string {
  return `${ref.name}-${ref.version}`;
}

/**
 * The paper each recipe follows, for the card's citation block: title and authors as the paper gives
 * them; the authors of an anonymous submission, the year and the arXiv id as the benchmark's
 * repository (or a later paper) cites them.
 */
const PAPERS: Record<string, { key: string; title: string; authors: string[]; year: number; arxiv: string }> = {
  mtu: {
    key: 'wang2024mtubench',
    title: 'MTU-Bench: A Multi-Granularity Tool-Use Benchmark for Large Language Models',
    authors: ['Pei Wang', 'Yanan Wu', 'Zekun Wang', 'Jiaheng Liu', 'Xiaoshuai Song', 'Zhongyuan Peng', 'Ken Deng', 'Chenchen Zhang', 'Jiakai Wang', 'Junran Peng', 'Ge Zhang', 'Hangyu Guo', 'Zhaoxiang Zhang', 'Wenbo Su', 'Bo Zheng'],
    year: 2024,
    arxiv: '2410.11710',
  },
  toole: {
    key: 'huang2023metatool',
    title: 'MetaTool Benchmark for Large Language Models: Deciding Whether to Use Tools and Which to Use',
    authors: ['Yue Huang', 'Jiawen Shi', 'Yuan Li', 'Chenrui Fan', 'Siyuan Wu', 'Qihui Zhang', 'Yixin Liu', 'Pan Zhou', 'Yao Wan', 'Neil Zhenqiang Gong', 'Lichao Sun'],
    year: 2023,
    arxiv: '2310.03128',
  },
  nestools: {
    key: 'han2024nestools',
    title: 'NesTools: A Dataset for Evaluating Nested Tool Learning Abilities of Large Language Models',
    authors: ['Han Han', 'Tong Zhu', 'Xiang Zhang', 'Mengsong Wu', 'Hao Xiong', 'Wenliang Chen'],
    year: 2024,
    arxiv: '2410.11805',
  },
  tooltalk: {
    key: 'farn2023tooltalk',
    title: 'ToolTalk: Evaluating Tool Usage in a Conversational Setting',
    authors: ['Nicholas Farn', 'Richard Shin'],
    year: 2023,
    arxiv: '2311.10775',
  },
  acebench: {
    key: 'chen2025acebench',
    title: 'ACEBench: A Comprehensive Evaluation of LLM Tool Usage',
    authors: ['Chen Chen', 'Xinlong Hao', 'Weiwen Liu', 'Xu Huang', 'Xingshan Zeng', 'Shuai Yu', 'Dexun Li', 'Shuai Wang', 'Weinan Gan', 'Yuefeng Huang', 'others'],
    year: 2025,
    arxiv: '2501.12851',
  },
};

/** The BibTeX entry of the paper a recipe follows, or null for a recipe toolkiln does not ship. */
export function paperCitation(pipeline: string): string | null {
  const paper = PAPERS[pipeline];
  if (!paper) return null;
  return [
    `@article{${paper.key},`,
    `  title   = {${paper.title}},`,
    `  author  = {${paper.authors.join(' and ')}},`,
    `  journal = {arXiv preprint arXiv:${paper.arxiv}},`,
    `  year    = {${paper.year}}`,
    '}',
  ].join('\n');
}

/** Whether a path is absolute on this machine or another (`/…`, `~/…`, `C:\\…`, `\\\\server\\…`). */
const ABSOLUTE_PATH = /^(?:\/|~[\\/]|[A-Za-z]:[\\/]|\\\\)/;

/** A path as the card shows it: an absolute path (a user's `--config`) only by its last part, since the card is published. */
export function cardPath(path: string): string {
  return ABSOLUTE_PATH.test(path) ? `<local>/${basename(path.replaceAll('\\', '/'))}` : path;
}

/** A config with every absolute path in it shown as `cardPath` shows it. */
function withoutLocalPaths(value: unknown): unknown {
  if (typeof value === 'string') return cardPath(value);
  if (Array.isArray(value)) return value.map(withoutLocalPaths);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, withoutLocalPaths(v)]));
  return value;
}

function sizeCategory(samples: number): string {
  const bounds: [number, string][] = [
    [1_000, 'n<1K'],
    [10_000, '1K<n<10K'],
    [100_000, '10K<n<100K'],
    [1_000_000, '100K<n<1M'],
    [10_000_000, '1M<n<10M'],
  ];
  return bounds.find(([bound]) => samples < bound)?.[1] ?? 'n>10M';
}

const cell = (text: unknown) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
const table = (head: string[], rows: unknown[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
const usd = (cost: number | null) => (cost === null ? 'unknown (no price for the model)' : `$${cost.toFixed(4)}`);
const usageRow = (name: string, usage: Usage) => [name, usage.requests, usage.cached, usage.promptTokens, usage.completionTokens, usd(usage.costUsd)];

export interface DatasetCardInput {
  manifest: Manifest;
  /** Each split's Parquet file, relative to the export folder. */
  dataFiles: { split: string; path: string }[];
  /** The tool library's Parquet file, or null when the version has no tools. */
  toolsFile: string | null;
  splits: readonly string[];
  /** The export the card describes, when not `hf`: its format name, its config's name after the dataset's, and its Columns section. */
  format?: { name: string; configSuffix: string; columns: string };
}

/** The Hub id of the license of sources toolkiln does not know (`license: other` asks for one, `license_name`). */
const UNKNOWN_LICENSE_NAME = 'unknown-source-license';

export function datasetCard({ manifest, dataFiles, toolsFile, splits, format }: DatasetCardInput): string {
  const licenses = [...new Set(Object.keys(manifest.sources).map((path) => sourceLicense(path) ?? 'other'))].sort();
  if (!licenses.length) licenses.push('other');
  const configName = `${hfDatasetName(manifest)}${format?.configSuffix ?? ''}`;
  const config = withoutLocalPaths(manifest.config);
  const header = {
    license: licenses.length === 1 ? licenses[0] : licenses,
    // The Hub asks a card whose license is `other` for the license's id and where to read it: the Sources table below.
    ...(licenses.includes('other') ? { license_name: UNKNOWN_LICENSE_NAME, license_link: 'README.md' } : {}),
    pretty_name: `${manifest.name} (toolkiln ${manifest.pipeline} ${manifest.version})`,
    task_categories: ['text-generation'],
    tags: ['tool-use', 'function-calling', 'synthetic', 'toolkiln', manifest.pipeline],
    size_categories: [sizeCategory(manifest.counts.samples)],
    configs: [
      { config_name: configName, default: true, data_files: dataFiles.map(({ split, path }) => ({ split: hfSplitName(split, splits), path })) },
      ...(toolsFile ? [{ config_name: `${configName}-tools`, data_files: [{ split: 'library', path: toolsFile }] }] : []),
    ],
  };
  const citation = paperCitation(manifest.pipeline);
  const stats = manifest.stats as { seed?: number; limit?: number | null };
  const offline = manifest.models.every((model) => model.startsWith('offline'));
  const run = [
    `npx toolkiln run ${manifest.pipeline} --config toolkiln-config.json --name ${manifest.name}`,
    stats.seed !== undefined ? ` --seed ${stats.seed}` : '',
    typeof stats.limit === 'number' ? ` --limit ${stats.limit}` : '',
    offline ? ' --llm offline' : ` --llm openai --model ${manifest.models[0] ?? '<model>'}`,
  ].join('');
  const columns =
    format?.columns ??
    [
      '`id`, `benchmark`, `category`, `split`: text. `tools`: a list of `{name, description, parameters, returns, domain, plugin, isAction, provenance}`.',
      '`dialogue`: a list of turns `{role, content, thought, calls, observations, response}`.',
      'Values whose shape differs from record to record are JSON text, as OpenAI carries `function.arguments`: a tool\'s `parameters`, `returns` and `provenance`, a turn\'s `calls` (`[{id, tool, arguments}]`; an argument `{"$ref": "<callId>.<field>"}` stands for an earlier call\'s result) and `observations` (results by call id), and the sample\'s `expected` (gold calls or labels) and `meta` (source, lineage, checks).',
      'No value is null: an absent text is `""`, an absent JSON value the JSON text `null`, and `isAction` (whether calling the tool changes state) is `yes`, `no` or `unknown`.',
      `The \`${configName}-tools\` config holds the tool library in the same \`tools\` shape.`,
    ].join(' ');
  const sections = [
    `# ${manifest.name} ${manifest.version}`,
    `Tool-use samples made by the toolkiln \`${manifest.pipeline}\` pipeline (fingerprint \`${manifest.fingerprint}\`, toolkiln ${manifest.toolkilnVersion}).` +
      (offline ? ' Every LLM step ran on the offline backend: its text is template text, not model output.' : ''),
    '## Counts',
    table(['split', 'samples'], [...Object.entries(manifest.counts.bySplit).map(([split, n]) => [hfSplitName(split, splits), n]), ['**all**', manifest.counts.samples]]),
    table(['category', 'samples'], Object.entries(manifest.counts.byCategory)),
    `Tools in the library: ${manifest.counts.tools}. Records rejected on the way: ${manifest.counts.rejects}.`,
    '## Columns',
    columns,
    '## How it was made',
    table(['stage', 'version', 'in', 'out', 'rejected'], manifest.stages.map((s) => [s.stage, s.version, s.in, s.out, s.rejected])),
    `Models: ${manifest.models.map((m) => `\`${m}\``).join(', ') || 'none'}.`,
    table(['usage', 'requests', 'cached', 'prompt tokens', 'completion tokens', 'cost'], [usageRow('**total**', manifest.usage.total), ...Object.entries(manifest.usage.byModel).map(([model, usage]) => usageRow(model, usage))]),
    JSON.stringify(config) === JSON.stringify(manifest.config) ? 'Config (also in `toolkiln-config.json`):' : 'Config (in full in `toolkiln-config.json`; here an absolute path shows only its last part):',
    '```json\n' + JSON.stringify(config, null, 2) + '\n```',
    ...checksSection(manifest),
    ...overlapSection(manifest),
    '## Sources',
    table(['file', 'sha256', 'license'], Object.entries(manifest.sources).map(([path, hash]) => [`\`${cardPath(path)}\``, `\`${hash}\``, sourceLicense(path) ?? 'unknown: check the source'])),
    '## Regenerate',
    [
      'With the same sources (same hashes) and toolkiln, the same run publishes the same samples:',
      '```sh',
      run,
      `npx toolkiln export ${manifest.name}@<version> --format ${format?.name ?? 'hf'} --out <folder>`,
      'hf upload <user>/<dataset> <folder> --repo-type dataset',
      '```',
    ].join('\n'),
    ...(citation ? ['## Citation', 'The paper whose construction method the pipeline follows:', '```bibtex\n' + citation + '\n```'] : []),
  ];
  return `---\n${stringify(header)}---\n\n${sections.join('\n\n')}\n`;
}

/**
 * What the publish gate found (`stats.audit`, core/publish-gate.ts): per check, what it looked at,
 * its findings and the samples they are in. Nothing for a version published before the gate.
 */
function checksSection(manifest: Manifest): string[] {
  const audit = manifest.stats.audit as { gate?: string; samples?: number; rejected?: number; checks?: Record<string, { kind?: string; checked?: number | null; findings?: number; samples?: number }> } | undefined;
  if (!audit?.checks) return [];
  const kept =
    audit.gate === 'record'
      ? 'A sample that breaks one was kept and counted (the records of an imported release are published as released).'
      : `A sample that breaks one was not published (${audit.rejected ?? 0} of ${audit.samples ?? 0}; each is in \`rejects.jsonl\` with its findings).`;
  return [
    '## Checks',
    `Every sample was checked before publishing against toolkiln's invariants (unique ids; one tool to a name, case aside; calls naming offered tools; arguments valid against their tool's schema; two-argument ranges in order). ${kept} The recipe's own checks are counted on the samples published (\`toolkiln datasets audit\` runs them all again).`,
    table(
      ['check', 'checked', 'findings', 'samples'],
      Object.entries(audit.checks).map(([check, count]) => [`\`${check}\``, count.checked ?? '-', count.findings ?? 0, count.samples ?? 0]),
    ),
  ];
}

/**
 * The samples' overlap with test sets, measured when the version was published (`stats.testOverlap`,
 * core/overlap/gate.ts): per reference set, split and category, the samples at or over each level's
 * threshold. Nothing for a version published before it was measured.
 */
function overlapSection(manifest: Manifest): string[] {
  const overlap = manifest.stats.testOverlap as OverlapSummary | undefined;
  if (!overlap?.levels) return [];
  const missing = overlap.missing?.length ? ` Not found when it was published, so not compared with: ${overlap.missing.join(', ')}.` : '';
  if (!overlap.references.length) return ['## Overlap with test sets', `Nothing was compared with.${missing}`];
  const done =
    overlap.mode === 'reject'
      ? `A sample at or over a threshold was not published (${overlap.rejected} of ${overlap.samples}; each is in \`rejects.jsonl\` with the reference sample it matches).`
      : 'Samples at or over a threshold were published and counted here (`toolkiln datasets overlap` lists each with the reference sample it matches).';
  return [
    '## Overlap with test sets',
    `Each sample was compared with the reference sets below: the share of its user text's word n-grams one reference sample has (\`ngram-n\`), its tool set and gold calls canonicalised (\`call-exact\`) or compared loosely (\`call-near\`), and the cosine of its user text's embedding (\`embedding\`, ${overlap.embedder ?? 'not measured'}). A sample overlaps at a level when its score reaches ${describeThresholds(overlap)}. ${done}${missing}`,
    overlapMarkdown(overlap),
  ];
}
