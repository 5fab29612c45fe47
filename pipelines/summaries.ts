/** What help says of a recipe without loading it. */
export interface RecipeSummary {
  /** One line of what the recipe makes: its PipelineDefinition's `description`. */
  description: string;
  /** The formats its versions export to (`toolkiln export --format`), in the order of its `exports` (a test holds the two equal). */
  exportFormats: readonly string[];
}

/**
 * Each recipe's summary, kept apart from the recipe so that `toolkiln --help` prints them without
 * loading any recipe (pipelines/catalog.ts loads one when asked). A recipe takes its description from here.
 */
export const RECIPE_SUMMARIES = {
  mtu: {
    description: 'MTU-Bench: dialogue datasets → tools → clustered, documented tool library → ReAct tool-use samples (S-S, S-M, M-S, M-M, OOD, hard)',
    exportFormats: ['canonical', 'openai-chat', 'hf', 'bfcl', 'trl', 'sharegpt', 'mtu'],
  },
  nestools: {
    description: 'NesTools: nested tool-call chains generated as Python programs, checked by AST, queries normalised and refined',
    exportFormats: ['canonical', 'openai-chat', 'hf', 'bfcl', 'trl', 'sharegpt', 'nestools', 'seal-tools'],
  },
  toole: {
    description: 'ToolE / MetaTool: plugin descriptions → four generation methods → filters → overlap resolution → multi-tool queries → task sets',
    exportFormats: ['toole', 'canonical', 'openai-chat', 'hf', 'bfcl', 'trl', 'sharegpt'],
  },
  tooltalk: {
    description: 'ToolTalk: scenarios per plugin triple, LLM-drafted conversations executed with the simulated tools (easy and hard sets)',
    exportFormats: ['canonical', 'openai-chat', 'hf', 'bfcl', 'trl', 'sharegpt', 'tooltalk'],
  },
  acebench: {
    description: 'ACEBench: synthesised APIs from a context tree, normal / special / agent records, rule and judge verification, en and zh',
    exportFormats: ['canonical', 'openai-chat', 'hf', 'bfcl', 'trl', 'sharegpt', 'acebench'],
  },
} as const satisfies Record<string, RecipeSummary>;

export type RecipeName = keyof typeof RECIPE_SUMMARIES;
