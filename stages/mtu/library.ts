import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonlAtomic } from '../../core/jsonl.ts';
import { ToolSpec, type Sample } from '../../core/records.ts';
import { toolKey } from './sample.ts';

/**
 * The documented tool library of a run. Once tools are documented, MTU samples carry only
 * references to their tools (name, plugin, domain) until the candidate-tools stage writes the full
 * entries into each sample: a documented tool can hold dozens of parameters (ATIS's flight tool
 * has 71) and would otherwise be copied into every record of every stage. The library is a file
 * of the run folder, written whole by the documentation stage before it completes, so a resumed
 * run finds it as the later stages left it.
 */
export class ToolLibrary {
  private constructor(private readonly tools: Map<string, ToolSpec>) {}

  static of(tools: Iterable<ToolSpec>): ToolLibrary {
    return new ToolLibrary(new Map([...tools].map((t) => [toolKey(t), t])));
  }

  static path(runDir: string): string {
    return join(runDir, 'mtu', 'tool-library.jsonl');
  }

  save(runDir: string): void {
    writeJsonlAtomic(ToolLibrary.path(runDir), this.list());
  }

  static load(runDir: string): ToolLibrary {
    const path = ToolLibrary.path(runDir);
    if (!existsSync(path)) throw new Error(`${path} is missing: the document-tools stage writes it; run the mtu pipeline from the start`);
    return ToolLibrary.of(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => ToolSpec.parse(JSON.parse(line))),
    );
  }

  list(): ToolSpec[] {
    return [...this.tools.values()].sort((a, b) => (toolKey(a) < toolKey(b) ? -1 : toolKey(a) > toolKey(b) ? 1 : 0));
  }

  get(tool: Pick<ToolSpec, 'name' | 'plugin'>): ToolSpec | undefined {
    return this.tools.get(toolKey(tool));
  }

  /** A sample's tools as full entries (a reference the library lacks stays as it is). */
  resolve(sample: Pick<Sample, 'tools'>): ToolSpec[] {
    return sample.tools.map((t) => this.get(t) ?? t);
  }

  /** A sample with full tool entries: what the checks and prompts of later stages read. */
  full<S extends Pick<Sample, 'tools'>>(sample: S): S {
    return { ...sample, tools: this.resolve(sample) };
  }
}

/** The reference a sample carries for a documented tool. */
export function toolReference(tool: ToolSpec): ToolSpec {
  return ToolSpec.parse({ name: tool.name, plugin: tool.plugin, domain: tool.domain });
}

/** Loads the run's library once per stage instance. */
export function libraryLoader(): (runDir: string) => ToolLibrary {
  let cached: { runDir: string; library: ToolLibrary } | undefined;
  return (runDir) => {
    if (cached?.runDir !== runDir) cached = { runDir, library: ToolLibrary.load(runDir) };
    return cached.library;
  };
}
