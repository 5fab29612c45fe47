import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { projectFile } from '../project-dir.ts';
import { formatZodError } from '../records.ts';

/** Dollars per 1,000,000 tokens; `batchDiscount`: the share taken off for requests answered through a Batch API (0.5 = half price). */
export const ModelPrice = z.object({ input: z.number().nonnegative(), output: z.number().nonnegative(), batchDiscount: z.number().min(0).max(1).optional() });
export type ModelPrice = z.infer<typeof ModelPrice>;

export const PriceTableFile = z.object({ _about: z.string().optional(), models: z.record(z.string(), ModelPrice) });
export type PriceTable = Record<string, ModelPrice>;

/** The price table shipped with toolkiln (users edit a copy; see `loadPriceTable`). */
export const DEFAULT_PRICE_TABLE_PATH = projectFile('core', 'llm', 'prices.json');

export function readPriceTable(path: string): PriceTable {
  if (!existsSync(path)) throw new UserError(`price table not found: ${path}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UserError(`${path}: price table is not valid JSON (${(error as Error).message})`);
  }
  const parsed = PriceTableFile.safeParse(json);
  if (!parsed.success) {
    throw new UserError(`${path}: invalid price table: ${formatZodError(parsed.error)}; expected {"models": {"<model>": {"input": <$ per 1M tokens>, "output": <$ per 1M tokens>, "batchDiscount": <optional share, 0 to 1>}}}`);
  }
  return parsed.data.models;
}

/**
 * The shipped table, overlaid by `<home>/.toolkiln/prices.json` when present, overlaid by an explicit
 * table (a file path or an object).
 */
export function loadPriceTable(options: { explicit?: string | PriceTable; userFile?: string }): PriceTable {
  const table: PriceTable = { ...readPriceTable(DEFAULT_PRICE_TABLE_PATH) };
  if (options.userFile && existsSync(options.userFile)) Object.assign(table, readPriceTable(options.userFile));
  if (typeof options.explicit === 'string') Object.assign(table, readPriceTable(options.explicit));
  else if (options.explicit) Object.assign(table, options.explicit);
  return table;
}

/** Exact name first, then the name without a date or version suffix (`-2024-08-06`, `-0613`). */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  if (Object.hasOwn(table, model)) return table[model];
  const base = model.replace(/-(\d{4}-\d{2}-\d{2}|\d{4})$/, '');
  return base !== model && Object.hasOwn(table, base) ? table[base] : null;
}

/** Dollars for the tokens; `batch`: answered through a Batch API, at the model's batch discount. */
export function costOf(price: ModelPrice | null, promptTokens: number, completionTokens: number, batch = false): number | null {
  if (!price) return null;
  const full = (promptTokens * price.input + completionTokens * price.output) / 1_000_000;
  return batch ? full * (1 - (price.batchDiscount ?? 0)) : full;
}
