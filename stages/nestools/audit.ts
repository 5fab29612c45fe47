import type { SampleAudit } from '../../core/audit.ts';
import type { Finding } from '../../core/invariants.ts';
import type { Sample } from '../../core/records.ts';
import { renderProgram } from '../../prompts/nestools-render-program.ts';
import { checkProgram } from './check-program.ts';
import { taskOf } from './import-export.ts';
import { formatIssue } from './issues.ts';
import { parseProgram } from './parse-program.ts';

/**
 * NesTools' own audit (§3.3): a sample's chain written as the Python program the generation
 * prompt asks for — one stub per tool, a `main()` of calls whose results feed later calls — must
 * parse and pass the program check (`checkProgram`: calls name defined stubs with their
 * parameters, results used as returned, …). A chain no program can hold (a parameter named
 * `class` or `A/B_results`) is a finding too: the benchmark's answers are programs.
 */
export function nestoolsAudits(): SampleAudit[] {
  let programs = 0;
  return [
    {
      name: 'nestools/program',
      description: 'the chain, written as a Python program, parses and passes the program check (AST)',
      checked: () => programs,
      check(sample: Sample): Finding[] {
        const calls = sample.expected.calls;
        if (!calls?.length) return [];
        programs++;
        const finding = (problem: string): Finding => ({ check: 'nestools/program', sampleId: sample.id, where: 'expected.calls', problem });
        let code: string;
        try {
          code = renderProgram({ tools: sample.tools, calls, task: taskOf(sample) });
        } catch (error) {
          return [finding(`cannot be written as a program: ${(error as Error).message}`)];
        }
        return checkProgram(parseProgram(code)).errors.map((issue) => finding(formatIssue(issue)));
      },
    },
  ];
}
