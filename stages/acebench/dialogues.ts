import { mapStage, type MapStage } from '../../core/stage.ts';
import { multiTurnDialogueStage, MULTI_TURN_CATEGORIES, type MultiTurnDialogueOptions } from './dialogue-multi-turn.ts';
import { AceDialogueRecord, CandidateSet } from './dialogue-records.ts';
import { singleDialogueStage, type SingleDialogueOptions } from './dialogue-single.ts';

/**
 * ACEBench §3.1.1 (3): the two generation pipelines as one step. A multi-turn candidate set goes to
 * the multi-agent pipeline (user, assistant and tool roles), every other one to the single
 * template-based generator.
 */
export function writeDialoguesStage(options: SingleDialogueOptions & MultiTurnDialogueOptions = {}): MapStage<CandidateSet, AceDialogueRecord> {
  const single = singleDialogueStage(options);
  const multiTurn = multiTurnDialogueStage(options);
  return mapStage({
    name: 'write-dialogues',
    version: 2,
    fanOut: true,
    input: CandidateSet,
    output: AceDialogueRecord,
    prompts: [...(single.prompts ?? []), ...(multiTurn.prompts ?? [])],
    keyOf: (set) => set.id,
    run: (set, ctx) => (MULTI_TURN_CATEGORIES.includes(set.category) ? multiTurn : single).run(set, ctx),
  });
}
