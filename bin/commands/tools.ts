import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { clusterSpace, LINKAGES, medoid, renderClusterPlot, silhouette, VectorSpace, type Clustering, type Linkage } from '../../core/cluster/index.ts';
import { project2d } from '../../core/cluster/projection.ts';
import { joinViews, lexicalEmbedder, transformersEmbedder, type Embedder } from '../../core/embed/index.ts';
import { UserError, messageOf } from '../../core/errors.ts';
import { isJsonObject } from '../../core/records.ts';
import { jsonValueOf } from '../../core/source-files.ts';
import type { Command } from '../command.ts';
import { choiceFlag, intFlag, needPositionals, numberFlag, stringFlag } from '../flags.ts';
import { outputFile } from '../output-paths.ts';
import { CLUSTER_DEFAULTS, TOOLS_CLUSTER } from '../command-specs.ts';

/** What `tools cluster` needs of a tool, read leniently from the tool formats toolkiln meets. */
export interface ToolEntry {
  name: string;
  description: string;
  parameters: string[];
}

const BY = ['name', 'name+parameters', 'description'] as const;
type By = (typeof BY)[number];

const asObject = (value: unknown): Record<string, unknown> | undefined => (isJsonObject(value) ? value : undefined);

/**
 * One tool from a canonical ToolSpec (as an object or in the line form), an OpenAI function tool (`{type: "function", function}`),
 * a Seal-Tools / NesTools API (`api_name`, `api_description`, `parameters: {name: {type}}`) or a
 * MetaTool plugin (`name_for_model`, `description_for_model`).
 */
export function toolEntryOf(raw: unknown, where: string): ToolEntry {
  const record = asObject(raw);
  if (!record) throw new UserError(`${where}: not a JSON object; each line must be one tool`);
  const fn = record.type === 'function' ? asObject(record.function) : undefined;
  const source = fn ?? record;
  const name = [source.name, source.api_name, source.name_for_model].find((v) => typeof v === 'string' && v.trim() !== '') as string | undefined;
  if (!name) throw new UserError(`${where}: tool has no name (expected "name", "api_name", "name_for_model" or "function.name"); add one or remove the line`);
  const description = ([source.description, source.api_description, source.description_for_model].find((v) => typeof v === 'string') as string | undefined) ?? '';
  // A published or canonical tools.jsonl carries the parameters schema as JSON text (core/line-form.ts).
  const parameters = asObject(typeof source.parameters === 'string' ? jsonValueOf(source.parameters) : source.parameters);
  const properties = asObject(parameters?.properties) ?? (parameters && parameters.type !== 'object' ? parameters : undefined);
  return { name: name.trim(), description, parameters: Object.keys(properties ?? {}) };
}

/** Reads tools from JSONL (one per line) or a JSON array; a repeated name keeps its first entry. */
export function readToolFile(path: string): { tools: ToolEntry[]; repeated: string[] } {
  if (!existsSync(path)) throw new UserError(`tools file not found: ${path}`);
  const text = readFileSync(path, 'utf8');
  const records: { raw: unknown; where: string }[] = [];
  if (text.trimStart().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch (error) {
      throw new UserError(`${path}: not valid JSON (${messageOf(error)})`);
    }
    (list as unknown[]).forEach((raw, i) => records.push({ raw, where: `${path}: entry ${i + 1}` }));
  } else {
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        records.push({ raw: JSON.parse(line), where: `${path}:${i + 1}` });
      } catch (error) {
        throw new UserError(`${path}:${i + 1}: not valid JSON (${messageOf(error)}); fix or remove that line`);
      }
    });
  }
  if (!records.length) throw new UserError(`${path}: no tools in the file (expected one JSON tool per line)`);
  const seen = new Set<string>();
  const tools: ToolEntry[] = [];
  const repeated: string[] = [];
  for (const { raw, where } of records) {
    const tool = toolEntryOf(raw, where);
    if (seen.has(tool.name)) repeated.push(tool.name);
    else {
      seen.add(tool.name);
      tools.push(tool);
    }
  }
  return { tools, repeated };
}

/** Vectors of the tools: their names, names (¾) with parameter names (¼, embedded by `parameterEmbedder`), or descriptions. */
export async function embedToolEntries(embedder: Embedder, tools: ToolEntry[], by: By, parameterEmbedder = embedder): Promise<VectorSpace> {
  if (by === 'description') return VectorSpace.from(await embedder.embed(tools.map((t) => t.description.trim() || t.name)), 'cosine', 'tool descriptions');
  const names = await embedder.embed(tools.map((t) => t.name));
  if (by === 'name') return VectorSpace.from(names, 'cosine', 'tool names');
  const parameters = await parameterEmbedder.embed(tools.map((t) => (t.parameters.length ? t.parameters.join(' ') : '(no parameters)')));
  return VectorSpace.from(joinViews([names, parameters], [0.75, 0.25]), 'cosine', 'tool names and parameters');
}

export interface ClusterSummary {
  id: number;
  size: number;
  representative: string;
  members: string[];
}

function summarize(space: VectorSpace, clustering: Clustering, tools: ToolEntry[]): ClusterSummary[] {
  return clustering.clusters
    .map((members, id) => ({ id, size: members.length, representative: tools[medoid(space, members)].name, members: members.map((i) => tools[i].name) }))
    .sort((a, b) => b.size - a.size || a.id - b.id);
}

export const toolsClusterCommand: Command = {
  ...TOOLS_CLUSTER,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const file = resolve(io.cwd, positionals[0]);
    const clusters = intFlag(values, 'clusters', { min: 1 });
    const threshold = numberFlag(values, 'threshold') ?? (clusters === undefined ? CLUSTER_DEFAULTS.threshold : undefined);
    const linkage: Linkage = choiceFlag(values, 'linkage', LINKAGES) ?? CLUSTER_DEFAULTS.linkage;
    const by: By = choiceFlag(values, 'by', BY) ?? CLUSTER_DEFAULTS.by;
    const mode = choiceFlag(values, 'mode', ['auto', 'exact', 'blocked'] as const) ?? CLUSTER_DEFAULTS.mode;
    const top = intFlag(values, 'top', { min: 0 }) ?? CLUSTER_DEFAULTS.top;
    const seed = intFlag(values, 'seed') ?? CLUSTER_DEFAULTS.seed;
    const modelPath = stringFlag(values, 'model-path');
    const plotPath = stringFlag(values, 'plot');
    const plotFile = plotPath === undefined ? undefined : outputFile(plotPath, '--plot', io);

    const { tools, repeated } = readToolFile(file);
    if (repeated.length) io.err(`${positionals[0]}: ${repeated.length} repeated tool name(s) skipped (first kept): ${repeated.slice(0, 5).join(', ')}${repeated.length > 5 ? ', …' : ''}`);
    const embedder = modelPath ? transformersEmbedder({ modelPath: resolve(io.cwd, modelPath) }) : lexicalEmbedder();
    // Parameter names are nouns: the lexical embedder must not read their first word as an action.
    const space = await embedToolEntries(embedder, tools, by, modelPath ? embedder : lexicalEmbedder({ identifierActions: false }));
    const started = Date.now();
    const clustering = clusterSpace(space, { threshold, clusters, linkage, mode, seed, source: positionals[0] });
    const seconds = (Date.now() - started) / 1000;
    const score = silhouette(space, clustering.labels, { seed });
    const summaries = summarize(space, clustering, tools);
    const reductionRatio = Math.round((tools.length / clustering.clusters.length) * 100) / 100;

    if (plotFile) {
      const { points, explained } = project2d(space, { seed });
      const representatives = new Map(summaries.map((s) => [clustering.labels[clustering.clusters[s.id][0]], s.representative]));
      const cut = threshold !== undefined ? `distance ≤ ${threshold}` : `${clusters} clusters`;
      writeFileSync(
        plotFile,
        renderClusterPlot({
          title: `Tool clusters: ${positionals[0]}`,
          notes: [
            `${tools.length} tools → ${clustering.clusters.length} clusters (${reductionRatio}:1), ${linkage} linkage, cosine ${cut}, embedded by ${by} (${embedder.id})`,
            `silhouette ${score.score === null ? 'undefined' : score.score.toFixed(4)}; PCA axes carry ${(explained[0] * 100).toFixed(1)}% and ${(explained[1] * 100).toFixed(1)}% of the variance`,
          ],
          points,
          labels: clustering.labels,
          names: tools.map((t) => t.name),
          representatives,
        }),
      );
    }

    const result = {
      file: positionals[0],
      tools: tools.length,
      repeatedNames: repeated.length,
      clusters: clustering.clusters.length,
      reductionRatio,
      silhouette: score.score,
      silhouetteScored: score.scored,
      linkage,
      threshold: threshold ?? null,
      requestedClusters: clusters ?? null,
      by,
      embedder: embedder.id,
      mode: clustering.mode,
      seconds,
      ...(clustering.blocked ? { blocked: clustering.blocked } : {}),
      ...(plotPath ? { plot: plotPath } : {}),
      clusterList: summaries,
    };
    if (io.json) {
      io.out(JSON.stringify(result));
      return 0;
    }
    io.out(`${tools.length} tools → ${clustering.clusters.length} clusters (reduction ${reductionRatio}:1)`);
    io.out(`${linkage} linkage, ${threshold !== undefined ? `cosine distance ≤ ${threshold}` : `${clusters} clusters`}, by ${by}, ${clustering.mode} mode, ${seconds.toFixed(2)} s`);
    io.out(`silhouette: ${score.score === null ? 'undefined (needs 2 to n − 1 clusters)' : score.score.toFixed(4)}${score.scored < tools.length ? ` (sample of ${score.scored})` : ''}`);
    const shared = summaries.filter((s) => s.size > 1);
    io.out(`${shared.length} clusters hold more than one tool${shared.length ? `; largest ${Math.min(top, shared.length)}:` : ''}`);
    for (const s of shared.slice(0, top)) io.out(`  ${String(s.size).padStart(4)}  ${s.representative}: ${s.members.filter((m) => m !== s.representative).slice(0, 10).join(', ')}${s.size > 11 ? ', …' : ''}`);
    if (plotPath) io.out(`plot: ${plotPath}`);
    return 0;
  },
};

export const toolsCommands: Command[] = [toolsClusterCommand];
export default toolsClusterCommand;
