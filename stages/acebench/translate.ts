import { Sample } from '../../core/records.ts';
import { withChecks, withLineage } from '../../core/sample-edits.ts';
import { TRANSPORT_FAILURES } from '../../core/llm/types.ts';
import { mapStage, reject, type MapStage } from '../../core/stage.ts';
import translatePrompt from '../../prompts/acebench-translate.ts';
import { aceRecordToSample, sampleToAceRecord } from './format.ts';
import { ACE_AGENT_CATEGORIES, type AceLanguage } from './record.ts';
import { keptStrings, translatableTexts, translationProblems, withTranslatedTexts } from './translation.ts';

export interface TranslateOptions {
  /** The languages every record is also published in (its own language is skipped). */
  into: AceLanguage[];
}

/**
 * ACEBench is released in English and Chinese: each record is kept and also translated into the
 * other language(s). The translation is checked before it is kept: when anything but text changed,
 * a stated value was lost or the model gave no usable answer, the original stays with a failed soft
 * check saying why (so it goes to review) and the translation is left out. An endpoint that cannot
 * be reached rejects the record as every LLM stage does (the runner stops, or asks again in batch mode).
 */
export function translateStage(options: TranslateOptions): MapStage<Sample, Sample> {
  return mapStage({
    name: 'translate',
    version: 1,
    input: Sample,
    output: Sample,
    fanOut: true,
    prompts: [translatePrompt],
    run: async (sample, ctx) => {
      const source = sampleToAceRecord(sample);
      // Agent tasks are not translated: each language has its own sandboxes (menus, names, messages),
      // so the pipeline builds them natively in every language it publishes.
      if ((ACE_AGENT_CATEGORIES as readonly string[]).includes(source.category)) return [sample];
      let original = sample;
      const translations: Sample[] = [];
      for (const language of options.into) {
        if (language === source.language) continue;
        const check = `acebench/translation-${language}`;
        const texts = translatableTexts(source);
        const result = await ctx.tryAsk(translatePrompt, { from: source.language, to: language, texts, keep: keptStrings(source) }, { key: `${ctx.key}#${language}` });
        if (!result.ok && (TRANSPORT_FAILURES.has(result.reason) || result.reason === 'batch_deferred')) return reject(result.reason, `translation into ${language}: ${result.detail}`);
        const target = result.ok && result.value.texts.length === texts.length ? withTranslatedTexts(source, language, result.value.texts) : undefined;
        const problems = !result.ok
          ? [`no usable translation (${result.reason}): ${result.detail}`]
          : !target
            ? [`the translation gave ${result.value.texts.length} texts for ${texts.length}`]
            : translationProblems(source, target);
        if (problems.length || !target || !result.ok) {
          original = withChecks(original, [{ name: check, pass: false, soft: true, reason: problems.join('; ') }]);
          continue;
        }
        const translated = aceRecordToSample(target);
        const kept = withChecks(translated, [...sample.meta.checks, { name: check, pass: true }]);
        translations.push(withLineage({ ...kept, meta: { ...kept.meta, lineage: [...sample.meta.lineage, ...kept.meta.lineage] } }, result.lineage));
      }
      return [original, ...translations];
    },
  });
}
