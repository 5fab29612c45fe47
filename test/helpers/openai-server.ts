import { afterAll, beforeAll, beforeEach } from 'vitest';
import { echoChat, startOpenAiServer, type OpenAiTestServer } from '../../bench/lib/openai-server.ts';
import { createGateway, type LlmGateway } from '../../core/llm/index.ts';

/** The local OpenAI-compatible endpoint (bench/lib/openai-server.ts), and hooks that start one for a group of tests. */
export * from '../../bench/lib/openai-server.ts';

/**
 * A local endpoint and a gateway to it (real `openai` SDK, no cache, no retries) for the tests of
 * one `describe`: started before them and closed after. Read `server` and `llm` inside the tests.
 */
export function useTestEndpoint(): { server: OpenAiTestServer; llm: LlmGateway } {
  const endpoint = {} as { server: OpenAiTestServer; llm: LlmGateway };
  beforeAll(async () => {
    endpoint.server = await startOpenAiServer();
    endpoint.llm = createGateway({ backend: 'openai', noCache: true, model: 'test-model', maxRetries: 0, maxRepairs: 0, env: { OPENAI_BASE_URL: endpoint.server.baseURL, OPENAI_API_KEY: 'sk-test' } });
  });
  afterAll(async () => {
    await endpoint.llm.close();
    await endpoint.server.close();
  });
  return endpoint;
}

/**
 * A local endpoint for the tests of one file or `describe`, started before them, closed after, and
 * back to its defaults before each test (echo answers, batches as planned, nothing held or recorded).
 */
export function useFreshEndpoint(): { readonly server: OpenAiTestServer } {
  const endpoint = {} as { server: OpenAiTestServer };
  beforeAll(async () => {
    endpoint.server = await startOpenAiServer();
  });
  afterAll(() => endpoint.server.close());
  beforeEach(() => {
    endpoint.server.reset();
    endpoint.server.setBatchPlanner(() => ({}));
    endpoint.server.holdBatches(false);
    endpoint.server.setResponder('chat', echoChat);
  });
  return endpoint;
}
