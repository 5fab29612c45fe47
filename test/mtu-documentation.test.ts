import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../core/records.ts';
import { applyScanStage } from '../core/stage.ts';
import { MtuConfig } from '../stages/mtu/config.ts';
import { documentToolsStage } from '../stages/mtu/tool-docs.ts';
import { stageContext } from './fixtures/mtu/context.ts';
import { call, handSample, round, tool } from './fixtures/mtu/samples.ts';

/** A schema tool documented in full (description, every parameter and result field): it needs no prose. */
function described(name: string): ToolSpec {
  const spec = tool(name, { city: { description: 'The city.' } }, ['city'], ['place']);
  spec.returns.properties.place.description = 'The place found.';
  return { ...spec, provenance: { source: 'hand', schema: true } };
}

describe('tool documentation lineage', () => {
  it('names the prompt and model only when the LLM wrote prose for the library, else the stage alone', async () => {
    const options = MtuConfig.parse({}).documentation;
    const findHotel = handSample('h', [described('FindHotel')], [round('A hotel in Paris.', [call('call_0', 'FindHotel', { city: 'Paris' })])]);
    const { out } = await applyScanStage(documentToolsStage(options), [findHotel], stageContext());
    expect(out.map((s) => s.meta.lineage)).toEqual([[{ stage: 'document-tools', version: documentToolsStage(options).version }]]);

    // A tool without prose in the same run: every sample names the documentation answers.
    const playMusic = handSample('m', [tool('PlayMusic', { song: {} }, ['song'])], [round('Play Yesterday.', [call('call_0', 'PlayMusic', { song: 'Yesterday' })])]);
    const both = await applyScanStage(documentToolsStage(options), [findHotel, playMusic], stageContext());
    for (const sample of both.out) expect(sample.meta.lineage).toEqual([{ stage: 'document-tools', version: documentToolsStage(options).version, prompt: 'mtu/tool-doc', promptHash: expect.any(String), model: 'offline-template' }]);
  });
});
