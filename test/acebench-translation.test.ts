import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import translatePrompt from '../prompts/acebench-translate.ts';
import { Rng } from '../core/rng.ts';
import type { AceRecord } from '../stages/acebench/record.ts';
import { keptStrings, translatableTexts, translationProblems, withTranslatedTexts } from '../stages/acebench/translation.ts';

const REFERENCE = '../shared/data/reference/acebench/data_en';
function released(category: string, index = 0): AceRecord {
  const line = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n')[index]!);
  return { category: category as AceRecord['category'], language: 'en', data: line(`${REFERENCE}/data_${category}.json`), answer: line(`${REFERENCE}/possible_answer/data_${category}.json`) };
}

function glossToChinese(record: AceRecord): AceRecord {
  const { texts } = translatePrompt.offline({ from: 'en', to: 'zh', texts: translatableTexts(record), keep: keptStrings(record) }, new Rng(1));
  return withTranslatedTexts(record, 'zh', texts);
}

describe('ACEBench translation keeps names and values', () => {
  const source = released('normal_multi_turn_user_adjust');

  it('a translation that only changes text passes, and every stated value stays in the dialogue', () => {
    const target = glossToChinese(source);
    expect(target.data.question).not.toBe(source.data.question);
    expect(target.data.question).toContain('Revolutionary New Product Launch');
    expect(translationProblems(source, target)).toEqual([]);
  });

  it('catches a changed value, a renamed parameter, a changed answer and an untranslated dialogue', () => {
    const target = glossToChinese(source);
    const changedValue = { ...target, data: { ...target.data, question: target.data.question.replace('John Doe', '约翰') } };
    expect(translationProblems(source, changedValue)).toEqual(['"John Doe" is no longer in the dialogue']);

    const renamed = structuredClone(target);
    const props = (renamed.data.function[0]!.parameters as any).properties;
    props.headline = props.title;
    delete props.title;
    expect(translationProblems(source, renamed)).toEqual(['function "branding_createPressRelease" changed beyond its descriptions']);

    const answer = structuredClone(target);
    (answer.answer!.ground_truth as any).branding_createPressRelease.author = 'Jane Doe';
    expect(translationProblems(source, answer)).toEqual(['the answer changed']);

    expect(translationProblems(source, { ...source, language: 'zh' })).toEqual(['the dialogue is not in Chinese']);
  });

  it('puts every description back in its place', () => {
    const texts = translatableTexts(source);
    const marked = withTranslatedTexts(source, 'zh', texts.map((text, i) => `#${i} ${text}`));
    expect(translatableTexts(marked)).toEqual(texts.map((text, i) => `#${i} ${text}`));
    expect(() => withTranslatedTexts(source, 'zh', texts.slice(1))).toThrow(/gave \d+ texts for \d+/);
  });
});

describe('ACEBench translation into English', () => {
  it('refuses a dialogue that still holds Chinese outside the kept names and values', () => {
    const line = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!);
    const dir = '../shared/data/reference/acebench/data_zh';
    const source: AceRecord = { category: 'normal_single_turn_single_function', language: 'zh', data: line(`${dir}/data_normal_single_turn_single_function.json`), answer: line(`${dir}/possible_answer/data_normal_single_turn_single_function.json`) };
    const texts = translatableTexts(source);
    const untouched = withTranslatedTexts(source, 'en', texts);
    expect(translationProblems(source, untouched).some((p) => p.startsWith('the dialogue still holds Chinese text ("'))).toBe(true);
    // Chinese only inside the kept values is fine.
    const kept = keptStrings(source).filter((k) => /[\u4e00-\u9fff]/.test(k));
    const english = `user: Please run it with ${kept.join(', ')} ${keptStrings(source).filter((k) => source.data.question.includes(k)).join(' ')}\n`;
    expect(translationProblems(source, withTranslatedTexts(source, 'en', [english, ...texts.slice(1)]))).toEqual([]);
  });
});
