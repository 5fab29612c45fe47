import { corruptCall, type Corruption, type EvalItem, type EvalSession, type SessionMessage, type SessionRequest, type SessionResult, type TranscriptEntry } from '../../core/eval.ts';
import { messageOf } from '../../core/errors.ts';
import type { Json } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { AceLanguage } from './record.ts';
import { SandboxSession } from './sandbox/execute.ts';
import { parseCallString, renderCallString, type StructuredCall } from './sandbox/python-call.ts';
import { agentContext, type AceGold } from './score-items.ts';
import type { AgentGold } from './score-agent.ts';

/**
 * ACEBench's agent evaluation with the model in the loop (model_inference/apimodel_inference.py,
 * multi_turn/ and multi_step/): the dialogue runs for at most 40 messages, and ends early on a
 * message holding "finish conversation" (from the third message on).
 *   - multi_step: the agent is given the instruction; each of its messages goes to execution, which
 *     runs the calls in the record's sandboxes and answers with the results (a message that is not a
 *     call list is answered "do not ask me questions"); the agent says "finish conversation" when done.
 *   - multi_turn: a simulated user, a language model given the instruction and the benchmark's rules
 *     for playing the user, opens and answers the agent; an agent message that is a call list goes to
 *     execution, any other to the user; the user says "finish conversation" when the task is done.
 * The mile_stone of the run is the agent's messages sent to execution, in order; the session's
 * output is that list, which the scorer runs again in a fresh sandbox (the sandboxes are
 * deterministic) for the end state and compares with the record's mile_stone for process accuracy.
 * Offline runs have no language model to play the user: the stand-in replays the record's user
 * turns (the instruction), then says "finish conversation" to whatever the agent says next.
 */

export const ACE_MAX_DIALOG_MESSAGES = 40;
export const FINISH = 'finish conversation';

const TEXT = {
  en: {
    step: `You are the agent. Carry out the user's request with the APIs below, step by step: when a call is needed, answer with only the call as a Python list, [ApiName(key1='value1', key2='value2')] (several calls separated by commas only when they do not depend on each other), and decide the next step from the execution result. Give the parameters the user's request mentions, in the user's words unless the API asks for a format. When the task is complete, answer "${FINISH}".`,
    turn: `You are the agent talking with a user. When the user has given what an API call needs, answer with only the call as a Python list, [ApiName(key1='value1', key2='value2')], and nothing else; its result comes back as an execution message. When something is missing, ask the user in plain text; never answer in the user's place. Give the parameters the user mentions, in the user's words unless the API asks for a format.`,
    execution: 'execution result: ',
    notACall: 'Please do not ask me any questions, use the known conditions to solve the problem',
    done: 'The task is complete.',
    opener: 'Is there anything you need help with today?',
    user: (instruction: string, travel: boolean) =>
      `You are a user talking with an agent (an assistant that can act for you).\n\nInstruction: ${instruction}\n\nRules:\n- Write one line at a time, as the user.\n- Do not give the whole instruction at once: only what the current step needs${travel ? '' : ', but all of it (for a reminder: its title, description and time)'}.\n- Never invent what the instruction does not say; if asked for it, say you do not know.\n- When asked to confirm, decide from the instruction.\n- Do not offer to help the agent; answer its questions as the instruction says.\n- When asked whether you need anything else, check that every task of the instruction is done; if not, ask for the next one.\n- When every task is done, write a separate line '${FINISH}' to end the dialogue.`,
  },
  zh: {
    step: `你是agent。请用下面的API一步步完成用户的请求：需要调用API时，只输出Python列表形式的调用[ApiName(key1='value1', key2='value2')]（只有互不依赖的调用才用逗号并列），并根据execution返回的结果决定下一步。参数取用户提到的内容，除非API规定了格式，否则用用户原文。任务完成后，输出“${FINISH}”。`,
    turn: `你是与用户对话的agent。用户提供了调用API所需的信息时，只输出Python列表形式的调用[ApiName(key1='value1', key2='value2')]，不输出其他内容，结果会以execution消息返回。信息不全时，用文字向用户提问，不要替用户回答。参数取用户提到的内容，除非API规定了格式，否则用用户原文。`,
    execution: 'execution结果：',
    notACall: 'Please do not ask me any questions, use the known conditions to solve the problem',
    done: '任务已完成。',
    opener: '今天有什么需要帮助的吗？',
    user: (instruction: string, travel: boolean) =>
      `你是一名与agent（能替你办事的助手）对话的用户。\n\nInstruction: ${instruction}\n\n规则：\n- 每次只写一行，作为用户的消息。\n- 不要一次说出全部说明，只给当前步骤需要的信息${travel ? '' : '，但要给全（例如添加提醒时给出标题、描述和时间）'}。\n- 不要编造说明中没有的信息；被问到时，就说不知道。\n- 需要确认时，按说明决定。\n- 不要主动帮助agent，按说明回答它的问题。\n- 被问是否还需要帮助时，检查说明中的任务是否都已完成；没有的话，提出下一项任务。\n- 所有任务完成后，单独输出一行“${FINISH}”结束对话。`,
  },
} satisfies Record<AceLanguage, unknown>;

type Sender = 'user' | 'agent' | 'execution';

/** Whether an agent message is a call list ACEBench's decoder reads (and so goes to execution). */
function callsOf(text: string): StructuredCall[] | null {
  try {
    const { calls } = parseCallString(text.trim());
    return calls.length ? calls : null;
  } catch {
    return null;
  }
}

export interface AceSessionOptions {
  maxMessages?: number;
}

/** The agent item's session, or null for an item that is not an agent task. */
export function aceAgentSession(item: EvalItem, options: AceSessionOptions = {}): EvalSession | null {
  const gold = item.gold as unknown as AceGold;
  if (gold.kind !== 'agent') return null;
  const multiTurn = item.category === 'agent_multi_turn';
  const maxMessages = options.maxMessages ?? ACE_MAX_DIALOG_MESSAGES;
  const text = TEXT[gold.language] ?? TEXT.en;
  const userTurns = item.messages.filter((m) => m.role === 'user').map((m) => m.content ?? '');
  const instruction = userTurns.join('\n');
  const sandbox = new SandboxSession({ initialConfig: gold.initialConfig, involvedClasses: gold.involvedClasses, language: gold.language });

  const agentSystem = `${multiTurn ? text.turn : text.step}\n\n${agentContext(item)}`;
  /** The dialogue as the agent sees it. */
  const agentView: SessionMessage[] = [{ role: 'system', content: agentSystem }];
  /** The dialogue as the simulated user sees it (its own lines as the assistant's). */
  const userView: SessionMessage[] = [
    { role: 'system', content: text.user(instruction, gold.involvedClasses.includes('Travel')) },
    { role: 'user', content: text.opener },
  ];
  const mileStone: string[] = [];
  const transcript: TranscriptEntry[] = [];
  let scriptedUser = 0;
  let steps = 0;
  let messages = 0;
  let over = false;
  let capped = false;
  let note: string | undefined;
  // Who speaks next: the first message is the user's (the instruction, or the simulated user's opening line).
  let next: Sender = multiTurn ? 'user' : 'agent';
  let opened = !multiTurn;
  if (!multiTurn) agentView.push({ role: 'user', content: instruction });

  /** Counts a message of the dialogue (the opening one is not counted), ending it on "finish conversation" or at the cap. */
  const add = (sender: Sender, message: string, recipient: Sender): void => {
    const counted = opened;
    opened = true;
    next = recipient;
    if (!counted) return;
    // ACEBench's execution message is a list of results, never the phrase itself.
    if (sender !== 'execution' && messages > 1 && message.includes(FINISH)) over = true;
    messages++;
    if (!over && messages >= maxMessages) {
      over = capped = true;
      note = `the dialogue ended at the cap of ${maxMessages} messages; its state and mile_stone are scored as they stand`;
    }
  };

  const execute = (step: string): void => {
    mileStone.push(step);
    const outcomes = callsOf(step) ? sandbox.execute(step) : null;
    for (const outcome of outcomes ?? []) {
      transcript.push({ role: 'call', call: outcome.call, ok: outcome.ok, result: outcome.ok ? (outcome.result ?? null) : (outcome.error ?? null) });
    }
    const reply = outcomes ? `${text.execution}${JSON.stringify(outcomes.map((o) => (o.ok ? (o.result ?? null) : `Error during execution: ${o.error}`)))}` : text.notACall;
    agentView.push({ role: 'user', content: reply });
    add('execution', reply, 'agent');
  };

  return {
    oracleSteps: [...(gold.milestones[0] ?? []), multiTurn ? text.done : FINISH],
    corruptStep: (index, corruption, rng) => corruptAceStep(gold, item, index, corruption, rng),
    next(): SessionRequest | null {
      if (over) return null;
      if (next === 'user') {
        const scripted = scriptedUser < userTurns.length ? userTurns[scriptedUser] : FINISH;
        return { role: 'user', messages: [...userView], scripted };
      }
      return { role: 'model', messages: [...agentView] };
    },
    reply(answer) {
      const from = next;
      if (from === 'user') scriptedUser++;
      else steps++;
      transcript.push({ role: from === 'user' ? 'user' : 'model', text: answer });
      if (answer === null) {
        over = true;
        note = `no answer from the ${from === 'user' ? 'simulated user' : 'model'}: the dialogue ends as it stands`;
        return;
      }
      if (from === 'user') {
        userView.push({ role: 'assistant', content: answer });
        agentView.push({ role: 'user', content: answer });
        add('user', answer, 'agent');
        return;
      }
      agentView.push({ role: 'assistant', content: answer });
      const toExecution = !multiTurn || (/\[.*\]/.test(answer) && callsOf(answer) !== null);
      add('agent', answer, toExecution ? 'execution' : 'user');
      if (over) return;
      if (toExecution) execute(answer);
      else userView.push({ role: 'user', content: answer });
    },
    result(): SessionResult {
      return { output: JSON.stringify(mileStone), transcript, steps, capped, ...(note ? { note } : {}) };
    },
  };
}

/** One mile_stone step with the mistake in one of its calls (extra-call: a step of its own, made before it). */
function corruptAceStep(gold: AgentGold, item: EvalItem, index: number, corruption: Corruption, rng: Rng): string | null {
  const step = gold.milestones[0]?.[index];
  const calls = step === undefined ? null : callsOf(step);
  if (!calls) return null;
  const goldTools = (gold.milestones[0] ?? []).flatMap((s) => callsOf(s) ?? []).map((call) => call.name);
  const at = rng.int(0, calls.length - 1);
  const changed = corruptCall({ name: calls[at].name, arguments: calls[at].arguments as Record<string, Json> }, corruption, rng, item.tools.map((t) => t.name), goldTools);
  if (!changed) return null;
  if (corruption === 'extra-call') return renderCallString([changed]);
  return renderCallString(calls.map((call, i) => (i === at ? changed : call)));
}

/** A normal item's gold calls with one mistake (the noisy oracle on one answer). */
export function corruptAceAnswer(item: EvalItem, corruption: Corruption, rng: Rng): string | null {
  const gold = item.gold as unknown as AceGold;
  if (gold.kind !== 'calls') return null;
  let calls: StructuredCall[];
  try {
    calls = parseCallString(gold.oracle).calls;
  } catch (error) {
    throw new Error(`ACEBench item ${item.id}: its gold answer does not parse (${messageOf(error)})`);
  }
  if (!calls.length) return null;
  const at = rng.int(0, calls.length - 1);
  const changed = corruptCall({ name: calls[at].name, arguments: calls[at].arguments as Record<string, Json> }, corruption, rng, item.tools.map((t) => t.name), calls.map((c) => c.name));
  if (!changed) return null;
  return renderCallString(corruption === 'extra-call' ? [changed, ...calls] : calls.map((call, i) => (i === at ? changed : call)));
}
