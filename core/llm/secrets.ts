/**
 * Removes an API key from any text that may reach a log, an error, a reject detail or the cache.
 * Endpoints sometimes echo the key (whole or in part) in error bodies; the whole key and any
 * `Bearer …` token are masked.
 */
export function redactor(secret: string | undefined): (text: string) => string {
  const bearer = /Bearer\s+[A-Za-z0-9._\-]+/g;
  if (!secret || secret.length < 4) return (text) => text.replace(bearer, 'Bearer [redacted]');
  return (text) => text.split(secret).join('[redacted]').replace(bearer, 'Bearer [redacted]');
}
