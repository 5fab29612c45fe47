import { compareStrings } from '../../core/collections.ts';

/**
 * Naming style of MTU-Bench tools: PascalCase tool names that start with a verb (as SGD's
 * `FindRestaurants`), snake_case parameter names (as SGD's `restaurant_name`).
 */

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/**
 * `make(name, context)` remembered, by context then name: tool creation names the same few
 * hundred intents and slots again in every record, so each is converted once. No context and an
 * empty one are the same (the namers read both as none). Bounded, so a long process naming ever
 * new things does not grow it without end.
 */
function remembered(make: (name: string, context?: string) => string): (name: string, context?: string) => string {
  let known = new Map<string, Map<string, string>>();
  let size = 0;
  return (name, context = '') => {
    let inContext = known.get(context);
    let value = inContext?.get(name);
    if (value === undefined) {
      value = make(name, context);
      if (size >= 4096) {
        known = new Map();
        size = 0;
        inContext = undefined;
      }
      if (!inContext) known.set(context, (inContext = new Map()));
      inContext.set(name, value);
      size++;
    }
    return value;
  };
}

/** Verbs a tool name may start with; a name starting otherwise gets `Get` in front. */
const VERBS = new Set(
  (
    'add book buy call cancel change check compare create delete find get list lookup make order pay play rate ' +
    'remove request reserve schedule search send set share show start stop transfer update'
  ).split(' '),
);

function pascal(parts: string[]): string {
  return parts.map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase()).join('');
}

/**
 * `atis_flight_time` (prefix `atis_`) → `GetFlightTime`, `find_hotel` → `FindHotel`,
 * `AddToPlaylist` → `AddToPlaylist`, `FindRestaurants` → `FindRestaurants`.
 */
export function toolNameOfIntent(intent: string, prefix?: string): string {
  return toolNameRemembered(intent, prefix);
}

const toolNameRemembered = remembered(toolNameOf);

function toolNameOf(intent: string, prefix?: string): string {
  const bare = prefix && intent.toLowerCase().startsWith(prefix.toLowerCase()) ? intent.slice(prefix.length) : intent;
  const parts = words(bare);
  if (!parts.length) return '';
  if (!VERBS.has(parts[0].toLowerCase())) parts.unshift('get');
  // Keep the source's own casing inside words (SGD `GetTimesForMovie`), only normalise the joins.
  return parts.map((w) => (w === w.toLowerCase() || w === w.toUpperCase() ? pascal([w]) : w[0].toUpperCase() + w.slice(1))).join('');
}

/**
 * `timeRange` → `time_range`, `fromloc.city_name` → `fromloc_city_name`; a MultiWOZ slot's domain
 * prefix goes: `hotel-pricerange` (service `hotel`) → `pricerange`.
 */
export function parameterNameOfSlot(slot: string, service?: string): string {
  return parameterNameRemembered(slot, service);
}

const parameterNameRemembered = remembered(parameterNameOf);

function parameterNameOf(slot: string, service?: string): string {
  const bare = service && slot.toLowerCase().startsWith(`${service.toLowerCase()}-`) ? slot.slice(service.length + 1) : slot;
  return words(bare)
    .map((w) => w.toLowerCase())
    .join('_');
}

/** `search_restaurant` / `searchRestaurant` / `Search Restaurant` → `SearchRestaurant` (LLM-made names). */
export function toolNameOfFreeText(name: string): string {
  return toolNameOfIntent(name);
}

/** A tool as the library keys it: its name and the plugin (source service) it comes from, and the source. */
export interface PluginTool {
  name: string;
  plugin?: string;
  source?: string;
}

/**
 * Names for tools that would otherwise share one (compared without case) although they come from
 * different plugins. Every such variant takes a suffix from where it comes from: tools of one source
 * the words in which their plugins differ (SGD's `FindRestaurants` of services `Restaurants_1` and
 * `Restaurants_2`: `FindRestaurants1`, `FindRestaurants2`), tools of different sources their source
 * (`FindRestaurantMultiwoz` beside `FindRestaurantShop`); where that does not tell them apart, the
 * whole plugin name (after the source), then a number. Never a name another tool has; the result
 * depends on the set of tools, not their order. Returns `index → new name` for the renamed tools.
 */
export function distinguishedToolNames(tools: readonly PluginTool[]): Map<number, string> {
  const groups = new Map<string, number[]>();
  tools.forEach((tool, i) => groups.set(tool.name.toLowerCase(), [...(groups.get(tool.name.toLowerCase()) ?? []), i]));
  const taken = new Set([...groups].filter(([, members]) => members.length === 1).map(([name]) => name));
  const out = new Map<number, string>();
  for (const members of [...groups.values()].filter((m) => m.length > 1)) {
    const ordered = [...members].sort((a, b) => compareStrings(tools[a].source ?? '', tools[b].source ?? '') || compareStrings(tools[a].plugin ?? '', tools[b].plugin ?? '') || compareStrings(tools[a].name, tools[b].name));
    const pluginWords = ordered.map((i) => words(tools[i].plugin ?? ''));
    const sourceWords = ordered.map((i) => words(tools[i].source ?? ''));
    let shared = 0;
    while (pluginWords.every((w) => w.length > shared && w[shared].toLowerCase() === pluginWords[0][shared].toLowerCase())) shared++;
    const clash = (name: string, k: number, names: string[]) => taken.has(name.toLowerCase()) || name.toLowerCase() === tools[ordered[k]].name.toLowerCase() || names.some((n, j) => j !== k && n.toLowerCase() === name.toLowerCase());
    const sources = new Set(sourceWords.map((w) => w.join(' ').toLowerCase()));
    const suffixes: ((k: number) => string[])[] = [
      ...(sources.size === ordered.length ? [(k: number) => sourceWords[k]] : [(k: number) => pluginWords[k].slice(shared)]),
      (k) => [...sourceWords[k], ...pluginWords[k].filter((w, j) => j >= sourceWords[k].length || w.toLowerCase() !== sourceWords[k][j].toLowerCase())],
    ];
    let names: string[] = [];
    for (const suffix of suffixes) {
      names = ordered.map((i, k) => tools[i].name + suffixOf(suffix(k)));
      if (!names.some((name, k) => clash(name, k, names))) break;
    }
    // Still the same (no source or plugin, or ones alike but for case): a number, the first free one.
    const clashing = [...names.keys()].filter((k) => clash(names[k], k, names));
    let n = 0;
    for (const k of clashing) {
      const base = names[k];
      do names[k] = `${base}${++n}`;
      while (clash(names[k], k, names));
    }
    ordered.forEach((i, k) => out.set(i, names[k]));
    for (const name of names) taken.add(name.toLowerCase());
  }
  return out;
}

/** Plugin words as a name suffix: `restaurants`, `1` → `Restaurants1`. */
function suffixOf(parts: string[]): string {
  return parts.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}
