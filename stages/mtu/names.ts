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
  const bare = service && slot.toLowerCase().startsWith(`${service.toLowerCase()}-`) ? slot.slice(service.length + 1) : slot;
  return words(bare)
    .map((w) => w.toLowerCase())
    .join('_');
}

/** `search_restaurant` / `searchRestaurant` / `Search Restaurant` → `SearchRestaurant` (LLM-made names). */
export function toolNameOfFreeText(name: string): string {
  return toolNameOfIntent(name);
}
