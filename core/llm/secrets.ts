/**
 * Keeps the API key out of everything toolkiln writes. Endpoints sometimes echo the key: in an
 * error body, and (a proxy, a model repeating its input) inside a successful answer. Every HTTP
 * body is masked as it arrives (`maskingFetch`), so no answer, refusal, tool-call argument or error
 * holds the key by the time it reaches the cache, the run's journals, samples, rejects or logs.
 *
 * A key shorter than MIN_SECRET_LENGTH is taken for a placeholder (vLLM's `EMPTY`, Ollama's
 * `ollama`): masking such a common word would damage the generated text and protect nothing.
 */
export const MIN_SECRET_LENGTH = 8;
export const MASK = '[redacted]';

/**
 * Replaces every occurrence of the key with MASK, also where a JSON string spells some of its
 * characters as `\uXXXX` escapes (one or more backslashes: a JSON answer inside a JSON body), which
 * decode to the key once parsed. MASK holds no quote or backslash, so a JSON text stays JSON.
 */
export function keyMasker(secret: string | undefined): (text: string) => string {
  if (!secret || secret.length < MIN_SECRET_LENGTH) return (text) => text;
  const spelled = new RegExp([...secret].map(charPattern).join(''), 'g');
  const first = secret[0];
  const backslash = '\\';
  return (text) => (text.includes(first) || text.includes(backslash) ? text.replace(spelled, MASK) : text);
}

/** For error messages and logs: the key (as keyMasker) and any `Bearer …` token. */
export function redactor(secret: string | undefined): (text: string) => string {
  const bearer = /Bearer\s+[A-Za-z0-9._\-]+/g;
  const maskKey = keyMasker(secret);
  return (text) => maskKey(text).replace(bearer, `Bearer ${MASK}`);
}

/**
 * A fetch whose answers have the key masked in their bodies before anyone reads them: the one
 * door through which an endpoint's text enters toolkiln.
 */
export function maskingFetch(inner: typeof fetch, mask: (text: string) => string): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    // A response that may not carry a body is passed on as it is.
    if (response.body === null || [101, 204, 205, 304].includes(response.status)) return response;
    const text = await response.text();
    const headers = new Headers(response.headers);
    // The text is already decoded, and masking may change its length.
    headers.delete('content-encoding');
    headers.delete('content-length');
    return new Response(mask(text), { status: response.status, statusText: response.statusText, headers });
  };
}

/** One character of the key: itself, or a JSON `\u` escape of it (hex digits in either case). */
function charPattern(char: string): string {
  const code = char.charCodeAt(0).toString(16).padStart(4, '0');
  const hex = [...code].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
  return `(?:${char.replace(/[.*+?^${}()|[\]\\\/-]/g, '\\$&')}|\\\\+u${hex})`;
}
