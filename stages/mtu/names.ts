/** Naming style of MTU-Bench tools: PascalCase tool names, snake_case parameter names. */

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/** `atis_flight_time` → `FlightTime`, `AddToPlaylist` → `AddToPlaylist` (a dataset prefix is dropped). */
export function toolNameOfIntent(intent: string, prefix?: string): string {
  const bare = prefix && intent.toLowerCase().startsWith(prefix.toLowerCase()) ? intent.slice(prefix.length) : intent;
  return words(bare)
    .map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase())
    .join('');
}

/** `timeRange` → `time_range`, `fromloc.city_name` → `fromloc_city_name`. */
export function parameterNameOfSlot(slot: string): string {
  return words(slot)
    .map((w) => w.toLowerCase())
    .join('_');
}
