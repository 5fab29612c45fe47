import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VectorSpace } from '../core/cluster/index.ts';
import { checkVectors, createEmbedder, joinViews, lexicalEmbedder, LexicalAnalyzer, openaiEmbedder, splitWords, stem } from '../core/embed/index.ts';
import { UserError } from '../core/errors.ts';
import { createGateway, type LlmGateway } from '../core/llm/index.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import { fakeEmbedding, startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.ts';

/** Cosine distances between consecutive pairs of texts, embedded together. */
async function distances(texts: string[], pairs: [number, number][]): Promise<number[]> {
  const space = VectorSpace.from(await lexicalEmbedder().embed(texts), 'cosine');
  return pairs.map(([a, b]) => space.pair(a, b));
}

describe('lexical embedder', () => {
  it('splits identifiers and folds API verbs and plurals', () => {
    expect(splitWords('getHTTPStatus_v2')).toEqual(['get', 'http', 'status', 'v2']);
    expect(splitWords('search-movie by Title')).toEqual(['search', 'movie', 'by', 'title']);
    expect([stem('movies'), stem('movie'), stem('cities'), stem('city'), stem('status')]).toEqual(['movi', 'movi', 'citi', 'citi', 'status']);
    const analyzer = new LexicalAnalyzer();
    expect(analyzer.tokens('searchMovies')).toEqual(analyzer.tokens('find_movie'));
    expect(analyzer.tokens('reserve_hotel')).toEqual(analyzer.tokens('bookHotel'));
    expect(analyzer.tokens('purchaseTicket')).toEqual(analyzer.tokens('buy_tickets'));
    expect(analyzer.weightedTokens('reserveBook')).toEqual([
      { token: 'book', action: true },
      { token: 'book', action: false },
    ]);
    expect(analyzer.weightedTokens('flightBooking').map((t) => t.action)).toEqual([false, true]);
  });

  it('puts synonymous tool names together and keeps different actions or objects apart', async () => {
    const texts = ['search_movie', 'find_movie', 'lookupMovies', 'share_location', 'share_my_location', 'send_location_info', 'create_product', 'delete_product', 'delete_customer', 'get_weather'];
    const [searchFind, searchLookup, shareShareMy, shareSend, createDelete, deleteDelete, movieWeather] = await distances(texts, [
      [0, 1],
      [0, 2],
      [3, 4],
      [3, 5],
      [6, 7],
      [7, 8],
      [1, 9],
    ]);
    expect(searchFind).toBeLessThan(1e-6);
    expect(searchLookup).toBeLessThan(1e-6);
    expect(shareShareMy).toBeLessThan(1e-6);
    expect(shareSend).toBeLessThan(0.25);
    expect(createDelete).toBeGreaterThan(0.3);
    expect(deleteDelete).toBeGreaterThan(0.3);
    expect(movieWeather).toBeGreaterThan(0.5);
  });

  it('is deterministic, unit length, and handles empty texts', async () => {
    const embedder = lexicalEmbedder({ dim: 256 });
    const [a, b] = [await embedder.embed(['find flights', '', 'book a hotel']), await embedder.embed(['find flights', '', 'book a hotel'])];
    expect(Buffer.from((a[0] as Float32Array).buffer)).toEqual(Buffer.from((b[0] as Float32Array).buffer));
    expect(a.every((v) => v.length === 256)).toBe(true);
    for (const v of a) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(embedder.id).toMatch(/^lexical:v1:256:/);
  });

  it('gives in its sparse form the numbers of its dense vectors bit for bit, fitted or not, with every option', () => {
    const parts = ['searchMovieByTitle', 'create_product', 'Find me a flight', 'to Oslo', 'tomorrow morning', 'the cheapest one', '東京の天気', 'city', 'cities', 'getHTTPStatus_v2', 'book', 'booking', 'a', '', 'reserve reserve reserve'];
    // Many texts from the parts (repeated words, collisions of the hashed features at a small dim, empty texts).
    const texts = Array.from({ length: 400 }, (_, i) => [parts[i % parts.length], parts[(i * 7) % parts.length], i % 5 ? parts[(i * 3) % parts.length] : ''].join(i % 2 ? ' ' : '').trim());
    const dense = (sparse: { dim: number; indices: Uint32Array; values: Float32Array }) => {
      const vector = new Float32Array(sparse.dim);
      sparse.indices.forEach((k, j) => (vector[k] = sparse.values[j]));
      expect([...sparse.indices]).toEqual([...sparse.indices].sort((a, b) => a - b));
      expect(sparse.values.every((v) => v !== 0)).toBe(true);
      return Buffer.from(vector.buffer);
    };
    for (const options of [{}, { dim: 16 }, { views: { actions: 0, words: 0.5, chars: 0.5 } }, { ngrams: [2, 5], identifierActions: false }]) {
      const embedder = lexicalEmbedder(options);
      const fitted = embedder.fit(texts.slice(0, 250));
      for (const [e, batch] of [[embedder, texts], [fitted, texts.slice(150)]] as const) {
        const sparse = e.embedSparse(batch);
        const vectors = e.embedSync(batch);
        expect(sparse.map(dense)).toEqual(vectors.map((v) => Buffer.from(v.buffer)));
      }
    }
  });

  it('fitted with its corpus embedded (fitSparse), gives the embedder fit gives and the corpus vectors it embeds, bit for bit', () => {
    const corpus = ['searchMovieByTitle', 'Find me a flight to Oslo tomorrow', 'cities city citi', 'reserve reserve reserve', '東京の天気', 'the cheapest one'];
    const bytes = (vectors: { indices: Uint32Array; values: Float32Array }[]) => vectors.map((v) => [[...v.indices], [...v.values]]);
    for (const options of [{}, { dim: 16 }, { views: { actions: 0, words: 0.5, chars: 0.5 } }]) {
      const { embedder, vectors } = lexicalEmbedder(options).fitSparse(corpus);
      const fitted = lexicalEmbedder(options).fit(corpus);
      expect(embedder.id).toBe(fitted.id);
      expect(bytes(vectors)).toEqual(bytes(fitted.embedSparse(corpus)));
      expect(bytes(embedder.embedSparse(['Find a film', 'city']))).toEqual(bytes(fitted.embedSparse(['Find a film', 'city'])));
    }
  });

  it('rejects bad options with a clear error', () => {
    expect(() => lexicalEmbedder({ dim: 3 })).toThrow(UserError);
    expect(() => lexicalEmbedder({ ngrams: [1] })).toThrow(/n-gram sizes/);
    expect(() => lexicalEmbedder({ views: { actions: 0, words: 0, chars: 0 } })).toThrow(/not all zero/);
  });
});

describe('vector checks', () => {
  it('names the row and position of a NaN, and unequal lengths', () => {
    expect(() => checkVectors([[1, 2], [NaN, 1]], 2, 'embedder x')).toThrow(/embedder x: vector 1 holds NaN at position 0/);
    expect(() => checkVectors([[1, 2], [1]], 2, 'embedder x')).toThrow(/vector 1 has 1 numbers, vector 0 has 2/);
    expect(() => checkVectors([[1, 2]], 2, 'embedder x')).toThrow(/returned 1 vectors for 2 texts/);
  });

  it('joins views so that cosine is the weighted mean of the views', () => {
    const joined = joinViews(
      [
        [[1, 0], [1, 0]],
        [[1, 0], [0, 1]],
      ],
      [3, 1],
    );
    const space = VectorSpace.from(joined, 'cosine');
    expect(1 - space.pair(0, 1)).toBeCloseTo(0.75, 6);
  });
});

describe('openai embedder', () => {
  let server: OpenAiTestServer;
  const gateways: LlmGateway[] = [];
  beforeAll(async () => {
    server = await startOpenAiServer();
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await server.close();
  });
  const gateway = () => {
    const g = createGateway({ backend: 'openai', noCache: true, model: 'test-model', env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'sk-test' } });
    gateways.push(g);
    return g;
  };

  it('embeds through the gateway and the real openai client', async () => {
    server.reset();
    const embedder = createEmbedder({ kind: 'openai', model: 'test-embedding' }, { gateway: gateway(), stage: 'merge-tools' });
    expect(embedder.id).toBe('openai:test-embedding');
    const vectors = await embedder.embed(['find a movie', 'book a hotel']);
    expect(Array.from(vectors[1])).toEqual(Array.from(Float32Array.from(fakeEmbedding('book a hotel'))));
    expect(server.requests.filter((r) => r.endpoint === 'embeddings').at(-1)!.body.model).toBe('test-embedding');
  });

  it('refuses an endpoint answer that is not a vector of numbers', async () => {
    server.reset();
    server.setResponder('embeddings', () => ({ embeddings: [[0.1, null as unknown as number]] }));
    await expect(openaiEmbedder(gateway(), { stage: 's' }).embed(['x'])).rejects.toThrow(/vector 0 holds null at position 1/);
    server.setResponder('embeddings', (request) => ({ embeddings: (request.body.input as string[]).map((t) => fakeEmbedding(t)) }));
  });

  it('says what to do when the backend has no embeddings', async () => {
    const embedder = createEmbedder({ kind: 'openai' }, { gateway: new OfflineGateway(1), stage: 'merge-tools' });
    await expect(embedder.embed(['x'])).rejects.toThrow(/lexical embedder/);
    expect(() => createEmbedder({ kind: 'openai' }, { gateway: {}, stage: 'merge-tools' })).toThrow(/needs an LLM backend with embeddings/);
  });
});
