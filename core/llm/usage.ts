import type { Usage } from '../records.ts';
import { costOf, priceOf, type PriceTable } from './pricing.ts';
import { emptyUsage, type UsageReport } from './types.ts';

/** Rough token count of a text (about four characters per token), for limits and estimates only. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Rough prompt tokens of a chat request: its texts plus a few tokens of framing per message. */
export function estimateMessageTokens(messages: readonly { content: string }[]): number {
  let tokens = 3;
  for (const message of messages) tokens += 4 + estimateTokens(message.content);
  return tokens;
}

interface Cell {
  stage: string;
  model: string;
  /** Answered through a Batch API: priced at the model's batch discount. */
  batch: boolean;
  requests: number;
  cached: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * Counts requests, cache hits and tokens per (stage, model), and prices them from the table.
 * A bucket that holds tokens of a model the table does not list has cost `null` (tokens only).
 */
export class UsageMeter {
  private readonly cells = new Map<string, Cell>();
  private readonly warned = new Set<string>();

  constructor(private readonly prices: PriceTable, private readonly log: (message: string) => void = () => {}) {}

  private cell(stage: string, model: string, batch = false): Cell {
    const id = `${stage}\u0000${model}\u0000${batch}`;
    let cell = this.cells.get(id);
    if (!cell) {
      cell = { stage, model, batch, requests: 0, cached: 0, promptTokens: 0, completionTokens: 0 };
      this.cells.set(id, cell);
      if (!priceOf(this.prices, model) && !this.warned.has(model)) {
        this.warned.add(model);
        this.log(`no price for model "${model}" in the price table: usage is counted in tokens only (add it to prices.json for a cost)`);
      }
    }
    return cell;
  }

  /** One request sent (whatever its outcome), with the tokens it used; `batch`: answered through a Batch API. */
  request(stage: string, model: string, promptTokens: number, completionTokens: number, batch = false): void {
    const cell = this.cell(stage, model, batch);
    cell.requests++;
    cell.promptTokens += promptTokens;
    cell.completionTokens += completionTokens;
  }

  /** One answer served from the cache (nothing sent, nothing paid). */
  cacheHit(stage: string, model: string): void {
    this.cell(stage, model).cached++;
  }

  report(): UsageReport {
    const report: UsageReport = { total: emptyUsage(), byStage: {}, byModel: {} };
    const priced = new Set<Usage>();
    const add = (usage: Usage, cell: Cell, cost: number | null, first: boolean) => {
      usage.requests += cell.requests;
      usage.cached += cell.cached;
      usage.promptTokens += cell.promptTokens;
      usage.completionTokens += cell.completionTokens;
      // null once any part is unpriced; a number while every part is priced
      if (first) usage.costUsd = cost;
      else usage.costUsd = usage.costUsd === null || cost === null ? null : usage.costUsd + cost;
      priced.add(usage);
    };
    for (const cell of this.cells.values()) {
      const cost = costOf(priceOf(this.prices, cell.model), cell.promptTokens, cell.completionTokens, cell.batch);
      for (const usage of [report.total, (report.byStage[cell.stage] ??= emptyUsage()), (report.byModel[cell.model] ??= emptyUsage())]) {
        add(usage, cell, cost, !priced.has(usage));
      }
    }
    for (const usage of priced) if (usage.costUsd !== null) usage.costUsd = Math.round(usage.costUsd * 1e6) / 1e6;
    return report;
  }
}

/** One line for a run summary: `1,204 requests (310 cached), 1.2M in / 240k out tokens, $0.53`. */
export function formatUsage(usage: Usage): string {
  const cost = usage.costUsd === null ? 'cost unknown (model not in price table)' : `$${usage.costUsd.toFixed(usage.costUsd < 1 ? 4 : 2)}`;
  return `${usage.requests.toLocaleString('en-US')} requests (${usage.cached.toLocaleString('en-US')} cached), ${compact(usage.promptTokens)} in / ${compact(usage.completionTokens)} out tokens, ${cost}`;
}

function compact(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

/** `a + b` (or `a - b` with `sign` -1), bucket by bucket: usage counted in several processes, added up. */
export function combineUsage(a: UsageReport, b: UsageReport, sign: 1 | -1 = 1): UsageReport {
  const each = (x: Record<string, Usage>, y: Record<string, Usage>) =>
    Object.fromEntries([...new Set([...Object.keys(x), ...Object.keys(y)])].sort().map((key) => [key, combineOne(x[key], y[key], sign)]));
  return { total: combineOne(a.total, b.total, sign), byStage: each(a.byStage, b.byStage), byModel: each(a.byModel, b.byModel) };
}

function combineOne(x: Usage = emptyUsage(), y: Usage = emptyUsage(), sign: 1 | -1): Usage {
  // An empty bucket has no cost (null) but must not make the other one unpriced.
  const isEmpty = (u: Usage) => u.requests === 0 && u.cached === 0;
  const cost = isEmpty(y) ? x.costUsd : isEmpty(x) && sign === 1 ? y.costUsd : x.costUsd === null || y.costUsd === null ? null : Math.round((x.costUsd + sign * y.costUsd) * 1e6) / 1e6;
  return {
    requests: x.requests + sign * y.requests,
    cached: x.cached + sign * y.cached,
    promptTokens: x.promptTokens + sign * y.promptTokens,
    completionTokens: x.completionTokens + sign * y.completionTokens,
    costUsd: cost,
  };
}
