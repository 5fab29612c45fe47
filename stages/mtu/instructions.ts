import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { DEFAULT_INSTRUCTIONS, MTU_SETTINGS, TODAY_PLACEHOLDER, type InstructionTemplates } from '../../prompts/mtu-instructions.ts';
import { readSourceText } from '../../core/source-files.ts';

/**
 * The instruction templates a run's export uses: toolkiln's own (prompts/mtu-instructions.ts), any
 * setting replaced from the config's `export.instructions` file — a JSON object
 * `{"S-S": "…", "M-S": "…"}` whose texts may hold `{today}`. The run publishes the resolved
 * templates as `reports/mtu-instructions.json`, so exporting a version later reads them from the
 * version itself and never from a file that may have changed since.
 */

export const INSTRUCTIONS_REPORT = 'mtu-instructions.json';

export function loadInstructionTemplates(path: string | undefined): InstructionTemplates {
  if (!path) return { ...DEFAULT_INSTRUCTIONS };
  const text = readSourceText(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const why = (error as Error).message;
    throw new UserError(`${path}: cannot read the MTU instruction templates (${why}); give a JSON object such as {"S-S": "…", "M-S": "…"}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UserError(`${path}: the MTU instruction templates must be a JSON object keyed by setting (${MTU_SETTINGS.join(', ')})`);
  const templates = { ...DEFAULT_INSTRUCTIONS };
  for (const [key, text] of Object.entries(parsed)) {
    if (!(MTU_SETTINGS as readonly string[]).includes(key)) throw new UserError(`${path}: "${key}" is not an MTU setting; use ${MTU_SETTINGS.join(', ')}`);
    if (typeof text !== 'string' || !text.trim()) throw new UserError(`${path}: the "${key}" template must be a non-empty string (it may hold ${TODAY_PLACEHOLDER})`);
    templates[key as keyof InstructionTemplates] = text;
  }
  return templates;
}

/** The templates a published version was made with (the defaults for versions made before they were published). */
export function versionInstructionTemplates(versionDir: string | undefined): InstructionTemplates {
  const path = versionDir && join(versionDir, 'reports', INSTRUCTIONS_REPORT);
  if (!path || !existsSync(path)) return { ...DEFAULT_INSTRUCTIONS };
  return { ...DEFAULT_INSTRUCTIONS, ...(JSON.parse(readFileSync(path, 'utf8')) as Partial<InstructionTemplates>) };
}
