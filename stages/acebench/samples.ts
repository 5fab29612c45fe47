import { Sample } from '../../core/records.ts';
import type { MapStage } from '../../core/stage.ts';
import { aceRecordToSample } from './format.ts';
import { AceRecordSchema, type AceRecord } from './record.ts';

/** Generated records in the released shape become canonical samples, as imported ones do. */
export function asSamplesStage(): MapStage<AceRecord, Sample> {
  return {
    kind: 'map',
    name: 'as-samples',
    version: 1,
    input: AceRecordSchema,
    output: Sample,
    keyOf: (record) => `${record.language}/${record.data.id}`,
    run: async (record) => aceRecordToSample(record),
  };
}
