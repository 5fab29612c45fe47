import type { BenchmarkScorer, Corruption, EvalItem, EvalSession, SessionRequest, SessionResult } from '../core/eval.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import { answerPrompt } from './llm-model.ts';
import { drawCorruption } from './noisy-oracle.ts';

/**
 * The model in the loop: each interactive item's session asks, the chosen model answers, the session
 * acts on the answer (runs the calls, feeds results back, passes text to its simulated user) until
 * it is over. The offline models answer from the session's gold steps: the oracle says each one, the
 * noisy oracle says them with one step changed. A model behind the gateway answers every step
 * through it, one request per step: the messages of a step hold everything before it, so the
 * response cache keys each step, and a re-run (or a run resumed after a crash) replays the cached
 * steps without asking, and asks only from the first step it lacks.
 */

export type LoopModel = { kind: 'oracle' } | { kind: 'noisy-oracle'; seed: number } | { kind: 'llm'; llm: LlmGateway; userLlm?: LlmGateway };

export interface LoopOutcome extends SessionResult {
  /** The gateway's failure on a step the model (or the simulated user) could not answer. */
  failure?: string;
  /** Noisy oracle: the corruption drawn for the item, and whether a step could take it. */
  drawn?: Corruption | null;
  applied?: boolean;
}

/** A session that keeps asking past this many replies has a bug (each one caps its own steps far lower). */
const RUNAWAY = 10_000;

type Answer = { text: string | null; failure?: string };
type Answerer = (request: SessionRequest, step: number) => Promise<Answer> | Answer;

/** Drives one session to its end. */
export async function runSession(session: EvalSession, answer: Answerer): Promise<SessionResult & { failure?: string }> {
  let failure: string | undefined;
  let step = 0;
  for (let request = session.next(); request; request = session.next()) {
    if (step >= RUNAWAY) throw new Error(`an eval session asked ${RUNAWAY} times without ending`);
    const reply = await answer(request, step++);
    failure ??= reply.failure;
    session.reply(reply.text);
  }
  return { ...session.result(), ...(failure ? { failure } : {}) };
}

/** The offline answerer: the model's steps from `script` in order; the user from the session's stand-in. */
function scripted(script: readonly string[]): Answerer {
  let at = 0;
  return (request) => (request.role === 'user' ? { text: request.scripted ?? null } : { text: script[at++] ?? null });
}

/** The oracle's steps with one corrupted (a seeded step of those that can take the drawn mistake). */
function noisyScript(item: EvalItem, session: EvalSession, seed: number): { script: string[]; drawn: Corruption | null; applied: boolean } {
  const script = [...session.oracleSteps];
  const { corruption, rng } = drawCorruption(item, seed);
  if (!corruption || !script.length) return { script, drawn: corruption, applied: false };
  const start = rng.int(0, script.length - 1);
  for (let k = 0; k < script.length; k++) {
    const index = (start + k) % script.length;
    const changed = session.corruptStep(index, corruption, rng);
    if (changed === null) continue;
    if (corruption === 'extra-call') script.splice(index, 0, changed);
    else script[index] = changed;
    return { script, drawn: corruption, applied: true };
  }
  return { script, drawn: corruption, applied: false };
}

function llmAnswerer(llm: LlmGateway, item: EvalItem, userLlm = llm): Answerer {
  return async (request, step) => {
    const result = await (request.role === 'user' ? userLlm : llm).generate(answerPrompt, { messages: request.messages }, { stage: request.role === 'user' ? 'eval-user' : 'eval', key: `${item.id}#${step}` });
    return result.ok ? { text: result.value.text } : { text: null, failure: `${request.role === 'user' ? 'simulated user: ' : ''}${result.reason}: ${result.detail}` };
  };
}

/** One item in the loop, or null when the scorer scores it on one answer. */
export async function runItem(scorer: BenchmarkScorer, item: EvalItem, model: LoopModel): Promise<LoopOutcome | null> {
  const session = scorer.session?.(item) ?? null;
  if (!session) return null;
  switch (model.kind) {
    case 'oracle':
      return runSession(session, scripted(session.oracleSteps));
    case 'noisy-oracle': {
      const { script, drawn, applied } = noisyScript(item, session, model.seed);
      return { ...(await runSession(session, scripted(script))), drawn, applied };
    }
    case 'llm':
      return runSession(session, llmAnswerer(model.llm, item, model.userLlm));
  }
}
