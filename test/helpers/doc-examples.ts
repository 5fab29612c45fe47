import { registry } from '../../bin/cli.ts';
import { commonOptions } from '../../bin/flags.ts';
import { pipelines } from '../../pipelines/index.ts';

/**
 * The shell examples of the project's markdown: every ```bash, ```sh and ```console block, with the
 * markers of the HTML comment just above it. A block with a marker cannot run in a test (it needs
 * something the test machine lacks or takes long) and is only parsed: each `npx toolkiln …` in it
 * must name a command and flags the CLI has. The markers, as docs/README-examples.md lists them:
 */
export const EXAMPLE_MARKERS = {
  'needs-endpoint': 'a model: an OpenAI-compatible endpoint or API key, a program serving one (vllm), or files of a model\'s answers',
  'needs-redis': 'a Redis server reachable by workers on other machines',
  'needs-browser': 'a person at a browser (review serve runs until Ctrl-C)',
  'needs-person': 'a person doing a step in between (annotators filling in sheets)',
  installs: 'installs packages or changes the machine (npm ci, a global install)',
  long: 'takes minutes (the test suite, the benchmarks, a full run per recipe at scale)',
} as const;
export type ExampleMarker = keyof typeof EXAMPLE_MARKERS;

export interface ShellExample {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: 'bash' | 'sh' | 'console';
  markers: ExampleMarker[];
  /** The commands of the block: the whole block, or a console block's `$ ` lines. */
  script: string;
}

const MARKER_LINE = /^<!--\s*example:\s*(.*?)\s*-->$/;

/** The shell examples of one markdown file; a marker the list does not know is an error naming the line. */
export function shellExamples(markdown: string, file: string): ShellExample[] {
  const lines = markdown.split('\n');
  const out: ShellExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line.trim().startsWith(fence[2]) && line.trim().replace(/[`~]/g, '') === '');
    const close = end === -1 ? lines.length : end;
    const lang = fence[3];
    if (lang === 'bash' || lang === 'sh' || lang === 'console') {
      const body = lines.slice(i + 1, close).map((line) => line.slice(Math.min(fence[1].length, line.length - line.trimStart().length)));
      const script = lang === 'console' ? body.filter((line) => line.startsWith('$ ')).map((line) => line.slice(2)).join('\n') : body.join('\n');
      out.push({ file, line: i + 1, lang, markers: markersAbove(lines, i, file), script });
    }
    i = close;
  }
  return out;
}

function markersAbove(lines: string[], fenceIndex: number, file: string): ExampleMarker[] {
  let j = fenceIndex - 1;
  while (j >= 0 && !lines[j].trim()) j--;
  const found = j >= 0 ? MARKER_LINE.exec(lines[j].trim()) : null;
  if (!found) return [];
  // Free text may follow a dash: `<!-- example: needs-endpoint — a vLLM server -->`.
  const names = found[1].split(/\s+[—-]\s+/)[0].split(/[\s,]+/).filter(Boolean);
  for (const name of names) {
    if (!(name in EXAMPLE_MARKERS)) throw new Error(`${file}:${j + 1}: unknown example marker "${name}" (known: ${Object.keys(EXAMPLE_MARKERS).join(', ')})`);
  }
  return names as ExampleMarker[];
}

/** A placeholder such as `<runId>` or `<name>@v` is a word, not a redirection. */
const PLACEHOLDER = /^<[^<>]+>(@\S*)?$/;
const REDIRECT_ALONE = /^\d*(>>?|<)(&\d+)?$/;
const REDIRECT_ATTACHED = /^\d*(>>?|<)\S+$/;

/** Words of a shell line: quotes removed, a comment dropped, optional-syntax brackets and parentheses stripped. */
function words(line: string): string[] {
  const out: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    const word = match[1] ?? match[2] ?? match[3];
    if (match[3]?.startsWith('#')) break;
    out.push(word);
  }
  return out;
}

/** Each `npx toolkiln …` invocation of a script, as its argument words (continuation lines joined). */
export function toolkilnInvocations(script: string): { line: string; args: string[] }[] {
  const joined = script.replace(/\\\n/g, ' ').split('\n');
  const out: { line: string; args: string[] }[] = [];
  for (const line of joined) {
    const tokens = words(line);
    for (let i = 0; i < tokens.length - 1; i++) {
      if (tokens[i] !== 'npx' || tokens[i + 1] !== 'toolkiln') continue;
      const args: string[] = [];
      for (let j = i + 2; j < tokens.length; j++) {
        const token = tokens[j];
        if (['&&', '||', ';', '|', '&'].includes(token) || /[;|&]$/.test(token)) {
          if (/[;|&]$/.test(token) && token.length > 1 && !['&&', '||'].includes(token)) args.push(token.replace(/[;|&]+$/, ''));
          break;
        }
        if (!PLACEHOLDER.test(token) && REDIRECT_ALONE.test(token)) {
          j++;
          continue;
        }
        if (!PLACEHOLDER.test(token) && REDIRECT_ATTACHED.test(token)) continue;
        args.push(token.replace(/^[[(]+|[\])]+$/g, ''));
      }
      out.push({ line: line.trim(), args: args.filter(Boolean) });
    }
  }
  return out;
}

/**
 * Lines that call `toolkiln` bare, as a command of its own: in the project folder it is not on the
 * PATH (`npx toolkiln` is), so such a line works only after a global install (`installs` blocks).
 */
export function bareToolkilnLines(script: string): string[] {
  return script
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => {
      const tokens = words(line);
      return tokens.some((token, i) => token === 'toolkiln' && (i === 0 || ['&&', '||', ';', '|', 'then', 'do'].includes(tokens[i - 1])));
    })
    .map((line) => line.trim());
}

/**
 * What is wrong with one `npx toolkiln` invocation, read against the CLI's command table without
 * running it: an unknown command or group, a flag the command does not take, an unknown pipeline.
 * Empty when it parses.
 */
export async function invocationProblems(args: string[]): Promise<string[]> {
  const positional = args.filter((a) => !a.startsWith('-'));
  const flags = args.filter((a) => a.startsWith('-'));
  if (!positional.length) {
    const unknown = flags.filter((f) => !['--help', '-h', '--version', '--json'].includes(f));
    return unknown.map((f) => `toolkiln takes no flag ${f} without a command`);
  }
  const entry = registry.filter((c) => c.path.every((w, i) => positional[i] === w)).sort((a, b) => b.path.length - a.path.length)[0];
  if (!entry) {
    const group = registry.filter((c) => c.path.length > 1 && c.path[0] === positional[0]);
    if (group.length && positional.length === 1) return [];
    return [`unknown command "${positional.slice(0, 2).join(' ')}"`];
  }
  const command = await entry.load();
  const options = { ...commonOptions, ...command.options };
  const problems: string[] = [];
  for (const flag of flags) {
    const name = flag.startsWith('--') ? flag.slice(2).split('=')[0] : flag.slice(1);
    const known = flag.startsWith('--') ? name in options : Object.values(options).some((o) => o.short === name);
    if (!known) problems.push(`${entry.path.join(' ')} has no flag ${flag.split('=')[0]}`);
  }
  if (['run', 'config'].includes(entry.path[0])) {
    const pipeline = positional[entry.path.length];
    if (pipeline && !PLACEHOLDER.test(pipeline) && !(pipeline in pipelines)) problems.push(`no pipeline "${pipeline}" (pipelines: ${Object.keys(pipelines).join(', ')})`);
  }
  return problems;
}
