import { createHash, hash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';

/** JSON with object keys sorted at every depth, so equal values always give equal text (and hashes). */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && (value as object).constructor === Object) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

export function sha256(text: string | Buffer): string {
  return hash('sha256', text, 'hex');
}

/** Short content hash of any JSON value, e.g. for ids: `hashOf(x, 16)`. */
export function hashOf(value: unknown, length = 64): string {
  return sha256(stableStringify(value)).slice(0, length);
}

/** The sha256 of a file read in 1 MiB chunks (a run hashes its sources, 15 MB for mtu's: the default 64 KiB chunks cost a third more CPU). */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The sha256 of a file read in 1 MiB chunks (no whole-file string or buffer). */
export function hashFileSync(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}
