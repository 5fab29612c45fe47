import type { BenchmarkScorer } from '../../core/eval.ts';
import { exporterOnCall, type Exporter } from '../../core/pipeline.ts';
import type { GoldReply } from './openai-chat.ts';

/** Formats every dataset can be exported to, whatever its recipe; each format's module is loaded when it exports. */
export const commonExporters: Record<string, Exporter> = {
  canonical: exporterOnCall(async () => (await import('./canonical.ts')).exportCanonical),
  'openai-chat': exporterOnCall(async () => (await import('./openai-chat.ts')).exportOpenAIChat),
  hf: exporterOnCall(async () => (await import('./hf.ts')).exportHuggingFace),
  bfcl: exporterOnCall(async () => (await import('./bfcl.ts')).exportBfcl),
  trl: exporterOnCall(async () => (await import('./trl.ts')).exportTrl),
  sharegpt: exporterOnCall(async () => (await import('./sharegpt.ts')).exportShareGpt),
};

/** A recipe's trl exporter (stages/export/trl.ts's `trlExporter`), its module loaded when it exports. */
export function trlExporterOnCall(goldReply?: GoldReply, scorer?: BenchmarkScorer): Exporter {
  return exporterOnCall(async () => (await import('./trl.ts')).trlExporter(goldReply, scorer));
}
