import { Sample, sampleId } from '../../core/records.ts';
import { mapStage, reject, type MapStage } from '../../core/stage.ts';
import { checkProgram } from './check-program.ts';
import { programToChain } from './convert.ts';
import { GeneratedProgram } from './generate-chains.ts';
import { chainCategory } from './import-export.ts';
import { formatIssue } from './issues.ts';
import { parseProgram } from './parse-program.ts';

/**
 * §3.3 automatic checks on each generated answer: parse the code, run the consistency check, and
 * turn a passing program into a canonical Sample. A failing one is rejected with its first error
 * code as the reason (all issues in the detail); warnings stay on the sample as soft checks.
 */

export interface CheckGeneratedOptions {
  /** Warnings (type mismatches, unused stubs, docstring disagreements) reject too. */
  strict: boolean;
  /** Reject chains in which no call takes another's result. */
  requireNested: boolean;
  split: string;
}

export function checkGeneratedStage(options: CheckGeneratedOptions): MapStage<GeneratedProgram, Sample> {
  return mapStage({
    name: 'check-program',
    version: 1,
    input: GeneratedProgram,
    output: Sample,
    keyOf: (program) => `${program.index}:${program.domain}`,
    // Parsing and checking programs is pure computation: off the thread that talks to the LLM.
    threads: { module: import.meta.url, factory: 'checkGeneratedStage', options },
    run: async (generated, ctx) => {
      const program = parseProgram(generated.answer);
      const check = checkProgram(program, { strict: options.strict });
      if (!check.ok) return reject(check.errors[0].code, check.errors.map(formatIssue).join('; '));
      const chain = programToChain(program, check, { domain: generated.domain, provenance: { source: 'nestools-generated', id: String(generated.index) } });
      if (options.requireNested && chainCategory(chain.calls) !== 'nested') return reject('not_nested', 'no call takes an earlier call\'s result (requireNested is set)');
      return Sample.parse({
        id: sampleId('nestools', { domain: generated.domain, answer: generated.answer }),
        benchmark: 'nestools',
        category: chainCategory(chain.calls),
        split: options.split,
        tools: chain.tools,
        dialogue: [{ role: 'user', content: chain.task }],
        expected: { calls: chain.calls },
        meta: {
          source: { dataset: 'nestools-generated', id: String(generated.index), domain: generated.domain },
          field: generated.domain,
          program: program.code,
          examples: generated.examples,
          lineage: [generated.lineage, ctx.lineage()],
          checks: [
            { name: 'nestools/program-check', pass: true },
            ...check.warnings.map((w) => ({ name: `nestools/${w.code}`, pass: false, soft: true, reason: formatIssue(w) })),
          ],
          tags: [],
        },
      });
    },
  });
}
