import { hashOf } from '../../../core/hash.ts';

/**
 * Tool names OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`), made from any name reversibly: the original
 * stays in the tool's provenance and the library's name map, and a name that had to change carries a
 * short hash of the original, so two originals never meet in one name.
 */

export const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;
const HASH = 8;

/** Letters with accents lose them, anything else outside `[a-zA-Z0-9_-]` becomes `_`. */
function ascii(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Cuts `stem` so that `stem_<hash>` fits in 64 characters. */
function withHash(stem: string, original: string): string {
  const hash = hashOf(original, HASH);
  return `${(stem || 'tool').slice(0, MAX - HASH - 1)}_${hash}`;
}

/** The name as OpenAI accepts it: itself when it already is valid, else its ASCII form with a hash of the original. */
export function openAiName(original: string): { name: string; change?: 'name-invalid-characters' | 'name-too-long' } {
  if (OPENAI_NAME.test(original)) return { name: original };
  return { name: withHash(ascii(original), original), change: original.length > MAX && OPENAI_NAME.test(original.slice(0, MAX)) ? 'name-too-long' : 'name-invalid-characters' };
}

/** The server's part of a qualified name: `Exa Search` → `Exa_Search`. */
export function serverSlug(server: string): string {
  return ascii(server) || `server_${hashOf(server, HASH)}`;
}

/** `<server>__<name>`, within 64 characters (hashed when longer). */
export function qualifiedName(server: string, name: string): string {
  const joined = `${serverSlug(server)}__${name}`;
  return joined.length <= MAX ? joined : withHash(joined, `${server}\u0000${name}`);
}
