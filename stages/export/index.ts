import type { Exporter } from '../../core/pipeline.ts';
import { exportBfcl } from './bfcl.ts';
import { exportCanonical } from './canonical.ts';
import { exportHuggingFace } from './hf.ts';
import { exportOpenAIChat } from './openai-chat.ts';
import { exportShareGpt } from './sharegpt.ts';
import { exportTrl } from './trl.ts';

/** Formats every dataset can be exported to, whatever its recipe. */
export const commonExporters: Record<string, Exporter> = {
  canonical: exportCanonical,
  'openai-chat': exportOpenAIChat,
  hf: exportHuggingFace,
  bfcl: exportBfcl,
  trl: exportTrl,
  sharegpt: exportShareGpt,
};
