import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePipeline } from '../core/pipeline.ts';
import { runPipeline } from '../core/run.ts';
import { isReject } from '../core/stage.ts';
import type { Sample } from '../core/records.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { createToolsStage } from '../stages/mtu/create-tools.ts';
import { ToolLibrary } from '../stages/mtu/library.ts';
import { parseMtuRecord } from '../stages/mtu/mtu-format.ts';
import { mtuMeta } from '../stages/mtu/sample.ts';
import { loadSgd } from '../stages/sources/sgd.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { fromData } from './fixtures/mtu/paths.ts';

const PROJECT = new URL('..', import.meta.url).pathname;

describe('SGD service calls', () => {
  it('become tool calls at the same system turn, with their real results as observations', async () => {
    const dialogues = loadSgd({ dir: fromData('sources/sgd'), splits: ['dev'] }, (p) => p);
    const stage = createToolsStage({ excludeIntents: [] });
    let compared = 0;
    for (const dialogue of dialogues) {
      const sample = (await stage.run(dialogue, stageContext(dialogue.id))) as Sample;
      expect(isReject(sample)).toBe(false);
      // Source turns and sample turns line up one to one (SGD dialogues end with a system turn).
      expect(sample.dialogue.map((t) => t.role)).toEqual(dialogue.turns.map((t) => (t.speaker === 'user' ? 'user' : 'assistant')));
      dialogue.turns.forEach((turn, i) => {
        const calls = sample.dialogue[i].calls ?? [];
        expect(calls.map((c) => c.tool)).toEqual((turn.serviceCalls ?? []).map((c) => c.method));
        (turn.serviceCalls ?? []).forEach((serviceCall, k) => {
          expect(calls[k].arguments).toEqual(serviceCall.parameters);
          expect(sample.dialogue[i].observations?.[calls[k].id]).toEqual(serviceCall.results?.[0] ?? {});
          compared++;
        });
        if (turn.speaker === 'system') expect(mtuMeta(sample).situations[String(i)] === 'api_call').toBe(calls.length > 0);
      });
      expect(sample.expected.turns?.[String(sample.dialogue.length - 1)]).toBeDefined();
    }
    expect(compared).toBeGreaterThan(150);
  });
});

type Doc = { required: string[]; optional: string[]; result: string[] };

/** Parameter sets compared as sets: the released files do not keep the schema's order everywhere. */
function doc(required: string[], optional: string[], result: string[]): Doc {
  return { required: [...required].sort(), optional: [...optional].sort(), result: [...result].sort() };
}

/** Tool entries of the released MTU-Eval files: name → the entries (description and parameter names). */
function releasedDocs(): Map<string, { description: string; doc: Doc }[]> {
  const released = new Map<string, { description: string; doc: Doc }[]>();
  for (const file of ['S-S', 'S-M', 'M-S', 'M-M', 'OOD']) {
    for (const line of readFileSync(fromData(`reference/mtu-bench/${file}_eval.jsonl`), 'utf8').split('\n').filter(Boolean)) {
      for (const tool of parseMtuRecord(JSON.parse(line)).tools) {
        const entry = doc(tool.required_parameters.map((p) => p.name), tool.optional_parameters.map((p) => p.name), tool.result_parameters.map((p) => p.name));
        released.set(tool.name, [...(released.get(tool.name) ?? []), { description: tool.description, doc: entry }]);
      }
    }
  }
  return released;
}

describe('SGD tool documentation', () => {
  it('gives the names and required / optional / result parameters the released MTU-Eval files show for the same tools', async () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-mtu-sgd-'));
    // The recipe up to its documentation step (clustering included), over every SGD split.
    const stages = (config: Parameters<typeof mtuPipeline.stages>[0]) => mtuPipeline.stages(config).slice(0, mtuPipeline.stages(config).findIndex((s) => s.name === 'document-tools') + 1);
    const pipeline = definePipeline({ ...mtuPipeline, name: 'mtu', stages });
    const overrides = { sources: { snips: { enabled: false }, atis: { enabled: false }, multiwoz: { enabled: false } } };
    const result = await runPipeline({ pipeline, configOverrides: overrides, llm: new OfflineGateway(1), home, projectDir: PROJECT, cwd: PROJECT, dryRun: true, progress: { quiet: true } });
    const library = ToolLibrary.load(join(home, '.toolkiln', 'runs', result.runId)).list();
    const ours = library.filter((t) => t.provenance?.source === 'sgd');
    expect(ours.length).toBeGreaterThanOrEqual(15);

    const released = releasedDocs();
    const compared = new Set<string>();
    for (const tool of ours) {
      const required = tool.parameters.required;
      const ourDoc = doc(required, Object.keys(tool.parameters.properties).filter((p) => !required.includes(p)), Object.keys(tool.returns.properties));
      // The same tool: same name (as created: the released files name both services' FindRestaurants alike), and the released description is the SGD intent's (some carry an added format note).
      const name = String(tool.provenance?.originalName ?? tool.name);
      const same = (released.get(name) ?? []).filter((r) => tool.description && r.description.startsWith(tool.description));
      for (const entry of same) expect(entry.doc, `${tool.plugin}/${tool.name}`).toEqual(ourDoc);
      if (same.length) compared.add(`${tool.plugin}/${tool.name}`);

    }
    // Every SGD tool documented from the shipped dialogues is one MTU-Eval shows, and all agree.
    expect([...compared].sort()).toEqual(ours.map((t) => `${t.plugin}/${t.name}`).sort());
    expect(compared.size).toBeGreaterThanOrEqual(15);
  });
});
