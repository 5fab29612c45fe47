import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OfflineGateway } from '../core/llm/offline.ts';
import { definePrompt } from '../core/prompt.ts';

/** The offline backend's answers: the renderer's own value when it meets the schema as it is (core/validate.ts; zod's verdict otherwise). */

const answer = z.object({ items: z.array(z.object({ name: z.string(), count: z.number().int() })), note: z.string().default('none') });

function promptAnswering(value: () => unknown) {
  return definePrompt<{ topic: string }, z.infer<typeof answer>>({ id: 'test/offline-answer', template: 'List {{topic}}.', schema: answer, offline: () => value() as z.infer<typeof answer> });
}

describe('offline answers', () => {
  it("hands on the renderer's value itself when it meets the schema as it is (no deep copy)", async () => {
    const made = { items: [{ name: 'a', count: 1 }], note: 'x' };
    const result = await new OfflineGateway(1).generate(promptAnswering(() => made), { topic: 't' }, { stage: 's', key: 'k' });
    expect(result.ok && result.value).toBe(made);
  });
});
