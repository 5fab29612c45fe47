import { DEFAULT_SEED, SEED_RANGE } from '../core/seed.ts';
import type { CommandSpec, Flag, Options } from './command.ts';

/**
 * Every command's words, usage, summary and flags: what the parser reads and what help prints,
 * declared once. This module stays light (no recipes, no LLM client, no review code) so that
 * `--help` of any command loads nothing else; a command's code spreads its spec into itself.
 * Defaults a command's code applies are constants here, so help cannot say otherwise.
 */

const string = (value: string, byDefault: string, help: string): Flag => ({ type: 'string', value, byDefault, help });
const flag = (help: string): Flag => ({ type: 'boolean', help });

const SEED_VALUES = `${SEED_RANGE.min} … ${SEED_RANGE.max}`;

/** Records a `--redis` run keeps enqueued at once unless --concurrency says otherwise. */
export const DISTRIBUTED_IN_FLIGHT = 256;
/** Records a worker takes at once unless --concurrency says otherwise. */
export const WORKER_CONCURRENCY = 8;

/** The endpoint's limits and the response cache, as `gatewayFromFlags` reads them (a command adds its own --llm / --model). */
export const GATEWAY_LIMIT_OPTIONS: Options = {
  concurrency: string('n', '8 requests in flight', 'requests to the endpoint in flight at once'),
  rpm: string('n', 'no limit', 'requests per minute to the endpoint'),
  tpm: string('n', 'no limit', 'tokens per minute to the endpoint'),
  'max-retries': string('n', '6', 'retries of one request after a 429, a 5xx, a timeout or a reset'),
  'no-cache': flag('neither read nor write the response cache (.toolkiln/cache)'),
  'price-table': string('file', 'the shipped table and .toolkiln/prices.json', 'JSON price table merged over the shipped one, for the cost estimates'),
};

const LLM_BACKEND = string('offline|openai|replay', 'openai when OPENAI_API_KEY or OPENAI_BASE_URL is set, else offline', 'the LLM: offline templates, an OpenAI-compatible endpoint (OPENAI_BASE_URL), or answers from the response cache only');
const CHAT_MODEL = string('m', 'TOOLKILN_MODEL, else gpt-4o-mini for OpenAI, the one model in the cache for replay', 'the chat model');

export const RUN: CommandSpec = {
  path: ['run'],
  usage:
    'toolkiln run <pipeline> [--config f] [--llm offline|openai|replay] [--model m] [--limit n] [--seed n] [--concurrency n] [--rpm n] [--tpm n] [--name dataset] [--resume runId] [--force] [--no-cache] [--dry-run] [--price-table f] [--max-retries n] [--max-transport-rejects share] [--min-yield share] [--allow-empty] [--batch | --batch-file out.jsonl] [--batch-results in.jsonl] [--redis url] [--redis-wait s] [--threads n] [--prune-stages] [--quiet] [--json]',
  summary: 'run a recipe end to end and publish the next dataset version',
  options: {
    config: string('file', "none: the recipe's defaults", "JSON file laid over the recipe's default config (its keys are listed by run <pipeline> --help; config show <pipeline> prints them)"),
    llm: LLM_BACKEND,
    model: CHAT_MODEL,
    limit: string('n', 'all', 'process only n of the records the loading stage emits, spread evenly over them'),
    seed: string('n', String(DEFAULT_SEED), `seed of every random choice (${SEED_VALUES})`),
    ...GATEWAY_LIMIT_OPTIONS,
    concurrency: string('n', `16 records and 8 requests; ${DISTRIBUTED_IN_FLIGHT} records with --redis`, "records a stage works on at once, and the endpoint's requests in flight"),
    name: string('dataset', "the pipeline's name", 'the dataset to publish a version of'),
    resume: string('runId', 'none: a new run', 'continue an unfinished run with the settings it started with (toolkiln runs list shows them)'),
    force: flag('publish even when a version with the same fingerprint exists'),
    'dry-run': flag('send nothing and publish nothing: report the requests the run would send and their estimated cost'),
    'max-transport-rejects': string('share', '0.1', "stop, publishing nothing, when more than this share of a stage's records cannot reach the endpoint"),
    'min-yield': string('share', "0.05, or the recipe's own", 'publish nothing when the samples are fewer than this share of the records loaded'),
    'allow-empty': flag('publish even a version with no samples or under --min-yield'),
    quiet: flag('no progress display on stderr'),
    batch: flag("send the requests not in the cache through the provider's Batch API (24 h window; --llm openai)"),
    'batch-file': string('out.jsonl', 'none', 'write the requests not in the cache to this file for vllm run-batch, and stop'),
    'batch-results': string('in.jsonl', 'none', "load a batch output file's answers into the response cache first"),
    redis: string('url', 'none: this process does all the work', 'enqueue per-record stage work on this Redis for toolkiln worker processes'),
    'redis-wait': string('s', '60', 'seconds a run with workers waits for a lost Redis before it stops'),
    threads: string('n', 'the cores but one, at most 4, for 500 records or more', 'worker threads for the stages whose work is pure computation (0: none)'),
    'prune-stages': flag("remove each stage's records once no later stage reads them, stats, rejects and attachments kept (a large run then fits its disk)"),
  },
  moreHelp: async (positionals) => (await import('./recipe-help.ts')).recipeHelp(positionals[0]),
};

export const WORKER: CommandSpec = {
  path: ['worker'],
  usage: 'toolkiln worker --redis url [--concurrency n] [--rpm n] [--tpm n] [--max-retries n] [--no-cache] [--price-table f]',
  summary: 'take per-record stage work of `toolkiln run … --redis url` from the Redis queue until stopped (Ctrl-C)',
  options: {
    redis: string('url', 'none: required', 'the Redis the run enqueues to, e.g. redis://10.0.0.5:6379'),
    ...GATEWAY_LIMIT_OPTIONS,
    concurrency: string('n', String(WORKER_CONCURRENCY), "records taken at once, and the endpoint's requests in flight"),
  },
};

export const DATASETS_LIST: CommandSpec = {
  path: ['datasets', 'list'],
  usage: 'toolkiln datasets list [--json]',
  summary: 'list datasets and their versions',
  options: {},
};

export const DATASETS_SHOW: CommandSpec = {
  path: ['datasets', 'show'],
  usage: 'toolkiln datasets show <name>[@v] [--compare-reference] [--json]',
  summary: "print a version's manifest summary, or with --compare-reference its statistics beside the released benchmark's",
  options: { 'compare-reference': flag("print the version's statistics beside the released benchmark's (also written to <v>.derived/reports/compare-reference.md)") },
};

export const DATASETS_DIFF: CommandSpec = {
  path: ['datasets', 'diff'],
  usage: 'toolkiln datasets diff <name>@a <name>@b [--ids] [--across] [--json]',
  summary: 'sample ids added, removed and changed between two versions of one dataset (--ids lists every id; --across compares two different datasets)',
  options: { ids: flag('list every id (otherwise the first 20 of each kind)'), across: flag('compare versions of two different datasets') },
};

export const DATASETS_VERIFY: CommandSpec = {
  path: ['datasets', 'verify'],
  usage: 'toolkiln datasets verify <name>[@v] [--json]',
  summary: "recompute every file's sha256 and compare it with the version's manifest, and find files it does not list (exit 1 on any difference)",
  options: {},
};

export const DATASETS_AUDIT: CommandSpec = {
  path: ['datasets', 'audit'],
  usage: 'toolkiln datasets audit <name>[@v] | --released <benchmark> [--dir folder] [--json]',
  summary: "check a version (or a released benchmark) against the shared invariants and its recipe's own audits: counts per check with the first offending ids",
  options: {
    released: string('benchmark', 'none: audit a version', 'audit a released benchmark a recipe reads instead: mtu-bench, metatool, tooltalk, nestools, seal-tools or acebench'),
    dir: string('folder', "its place beside the project, ../shared/data/reference/<benchmark>", "the released benchmark's folder (with --released)"),
  },
};

/** Hits `datasets overlap` lists after its table unless --show says otherwise. */
export const OVERLAP_SHOWN_HITS = 10;

export const DATASETS_OVERLAP: CommandSpec = {
  path: ['datasets', 'overlap'],
  usage: 'toolkiln datasets overlap <name>[@v] [--against released|<set>[=folder]|<name>@<v>|<file.jsonl> …] [--ngrams 8,13] [--threshold level=t …] [--embedder lexical|openai[:model]|<model folder> [--concurrency n] [--rpm n] [--tpm n] [--max-retries n] [--no-cache] [--price-table f]] [--show n] [--json]',
  summary:
    "how much of a version repeats test sets: per split and category, the samples whose user text (word n-grams, embedding) or gold calls (canonicalised) match a reference sample, each with the reference sample's id (all hits in datasets/<name>/<v>.derived/overlap/)",
  options: {
    against: { type: 'string', multiple: true, value: 'ref', byDefault: "the released sets the version's recipe reads", help: 'released (every released set), a released set (mtu-bench, metatool, tooltalk, nestools, seal-tools, acebench) or <set>=<folder>, <dataset>@<version>, or a JSONL file (or folder) of canonical samples; repeat it for several' },
    ngrams: string('n,n', "the version's testOverlap.ngrams, else 8,13", 'the n of the word n-gram levels'),
    threshold: { type: 'string', multiple: true, value: 'level=t', byDefault: "the version's testOverlap.thresholds, else ngram=0.5 call-exact=1 call-near=1 embedding=0.8", help: 'the score (0 … 1) at or over which a sample overlaps at a level (ngram, call-exact, call-near, embedding), or off; repeat it for several' },
    embedder: string('lexical|openai[:model]|dir', "the version's testOverlap.embedder, else the lexical one", 'what embeds the user texts: the built-in lexical embedder, the endpoint\'s embeddings (OPENAI_BASE_URL / OPENAI_API_KEY), or a local transformers model folder (config.json, tokenizer.json, onnx/model.onnx)'),
    show: string('n', String(OVERLAP_SHOWN_HITS), 'hits listed after the tables (every hit is in the hits file)'),
    ...GATEWAY_LIMIT_OPTIONS,
  },
};

export const RUNS_LIST: CommandSpec = {
  path: ['runs', 'list'],
  usage: 'toolkiln runs list [--json]',
  summary: 'list run folders (.toolkiln/runs/): state (running, unfinished, published, existing, dry-run), dataset, size',
  options: {},
};

export const RUNS_CLEAN: CommandSpec = {
  path: ['runs', 'clean'],
  usage: 'toolkiln runs clean [--older-than 7d] [--keep n] [--dry-run] [--json]',
  summary: 'remove run folders older than a duration (s, m, h, d, w) and/or beyond the n newest; never a running one',
  options: {
    'older-than': string('duration', 'none', 'remove runs whose last activity is older than this: 30m, 12h, 7d, 2w (with --keep: runs both)'),
    keep: string('n', 'none', 'remove the runs beyond the n newest (with --older-than: runs both)'),
    'dry-run': flag('list what would be removed, remove nothing'),
  },
};

export const EXPORT: CommandSpec = {
  path: ['export'],
  usage: 'toolkiln export <name>@v --format <format> [--out dir] [--keep-extensions] [--one-call-per-message] [--json]',
  summary: "write a version in a benchmark's native format (default folder: datasets/<name>/<v>.derived/export/<format>/, for hf …/export/hf/<name>-<v>/)",
  options: {
    format: string('format', 'none: required', "the format to write: one of the version's recipe's (toolkiln --help lists them per recipe)"),
    out: string('dir', 'datasets/<name>/<v>.derived/export/<format>/', 'the folder to write into (outside datasets/ and .toolkiln/)'),
    'keep-extensions': flag("keep toolkiln's extensions: openai-chat's x-toolkiln fields, acebench's agent records over toolkiln's classes"),
    'one-call-per-message': flag("trl: each tool call in an assistant message of its own, followed by its result (for chat templates without parallel calls, such as Llama 3.1's)"),
  },
};

const EVAL_SEED = string('n', String(DEFAULT_SEED), `seed of the noisy oracle and of the requests (${SEED_VALUES})`);
const EVAL_LIMIT = string('n', 'all', 'score only the items of the first n samples');

export const EVAL: CommandSpec = {
  path: ['eval'],
  usage:
    'toolkiln eval <name>@v (--predictions f.jsonl | --model oracle|noisy-oracle | --llm openai|replay --model m [--user-model u] [--concurrency n] [--rpm n] [--tpm n] [--max-retries n] [--no-cache] [--price-table f]) [--limit n] [--seed s] [--json]',
  summary: "score a model's answers on a version by its benchmark's own rules (results in datasets/<name>/<v>.derived/eval/<model>/)",
  options: {
    predictions: string('f.jsonl', 'none', 'score answers made elsewhere: JSONL of {"id": "<item id>", "output": "<the model\'s answer>" | null}'),
    model: string('m', 'none', 'oracle or noisy-oracle (offline), or with --llm the model that answers'),
    'user-model': string('u', 'the --model', "the model playing the benchmark's simulated user (with --llm)"),
    llm: string('openai|replay', 'none: --predictions or an offline --model', 'answer with a model behind the gateway'),
    limit: EVAL_LIMIT,
    seed: EVAL_SEED,
    ...GATEWAY_LIMIT_OPTIONS,
  },
};

/** Bootstrap resamples of `eval compare` unless --resamples says otherwise. */
export const COMPARE_RESAMPLES = 1000;

export const EVAL_COMPARE: CommandSpec = {
  path: ['eval', 'compare'],
  usage:
    'toolkiln eval compare <name>@v [--reference <released>] [--reference-dir dir] --model m [--model m2 …] [--llm openai|replay [--concurrency n] [--rpm n] [--tpm n] [--max-retries n] [--no-cache] [--price-table f]] [--resamples n] [--seed s] [--limit n] [--json]\n' +
    '      m: oracle | noisy-oracle[:seed] | predictions:<generated.jsonl>,<released.jsonl> | with --llm, a model name',
  summary: 'run the same model(s) on a version and on the released benchmark it regenerates: metrics side by side per category with a bootstrap 95% interval of the difference; with two or more models, whether both sides rank them alike',
  options: {
    model: { type: 'string', multiple: true, value: 'm', byDefault: 'none: required', help: 'a model answering both sides (see m above); repeat it to see whether both sides rank the models alike' },
    llm: string('openai|replay', 'none: offline models and predictions', 'answer with models behind the gateway (--model names them)'),
    reference: string('released', "the first released set the version's scorer reads", 'the released set to compare with'),
    'reference-dir': string('dir', '../shared/data/reference/<released>', "the released set's folder"),
    resamples: string('n', String(COMPARE_RESAMPLES), 'bootstrap resamples of the 95% interval'),
    limit: EVAL_LIMIT,
    seed: string('n', String(DEFAULT_SEED), `seed of the bootstrap, the noisy oracle and the requests (${SEED_VALUES})`),
    ...GATEWAY_LIMIT_OPTIONS,
  },
};

/** What `review export` splits the queue by unless its flags say otherwise. */
export const REVIEW_EXPORT_DEFAULTS = { annotators: 1, overlap: 0, raters: 2 } as const;

export const REVIEW_EXPORT: CommandSpec = {
  path: ['review', 'export'],
  usage: 'toolkiln review export <name>@v --format csv|labelstudio|argilla [--annotators n --overlap f [--raters k]] [--rate f] [--seed n] [--limit n] [--out dir] [--json]',
  summary: "select the version's review queue (written to datasets/<name>/<v>.derived/review/) and write sheets for annotators",
  options: {
    format: string('csv|labelstudio|argilla', 'none: required', 'the sheets to write: CSV, Label Studio tasks, or Argilla records'),
    annotators: string('n', String(REVIEW_EXPORT_DEFAULTS.annotators), 'annotators the queue is split among (a sheet each)'),
    overlap: string('f', String(REVIEW_EXPORT_DEFAULTS.overlap), 'share of the items given to more than one annotator (for agreement)'),
    raters: string('k', String(REVIEW_EXPORT_DEFAULTS.raters), 'annotators of each shared item'),
    rate: string('f', "0.05, or the version's config review.randomRate", 'share of each category drawn at random besides the flagged samples'),
    seed: string('n', `${DEFAULT_SEED}, or the version's config review.seed`, `seed of the random draw and of the assignment (${SEED_VALUES})`),
    limit: string('n', 'all', 'keep only the first n items by priority'),
    out: string('dir', 'datasets/<name>/<v>.derived/review/', 'the folder for the sheets (outside datasets/ and .toolkiln/)'),
  },
};

export const REVIEW_IMPORT: CommandSpec = {
  path: ['review', 'import'],
  usage: 'toolkiln review import <name>@v <file…> [--skip-invalid] [--llm offline|openai|replay] [--model m] [--quiet] [--json]',
  summary: 'validate filled sheets (CSV, Label Studio JSON export or Argilla records; or tool sheets, which run the recipe again) and publish the next version with the decisions applied',
  options: {
    'skip-invalid': flag('apply the valid rows and skip the invalid ones (otherwise an invalid row applies nothing)'),
    llm: { ...LLM_BACKEND, help: `tool sheets run the recipe again: ${LLM_BACKEND.help}` },
    model: { ...CHAT_MODEL, help: 'the chat model of the recipe run again (tool sheets)' },
    quiet: flag('no progress display on stderr (tool sheets)'),
  },
};

export const REVIEW_AGREEMENT: CommandSpec = {
  path: ['review', 'agreement'],
  usage: 'toolkiln review agreement <name>@v <file…> [--out dir] [--json]',
  summary: "annotators' agreement (per item, NesTools p, Cohen's κ, Fleiss' κ) and the adjudication sheet for their disagreements",
  options: { out: string('dir', 'datasets/<name>/<v>.derived/review/', 'the folder for the adjudication sheet (outside datasets/ and .toolkiln/)') },
};

/** The port `review serve` listens on unless --port says otherwise (0: one the system picks). */
export const REVIEW_PORT = 0;

export const REVIEW_SERVE: CommandSpec = {
  path: ['review', 'serve'],
  usage: 'toolkiln review serve <name>@v [--port p] [--host h] [--annotator id] [--requeue] [--json]',
  summary: "review the version's queue in the browser (a local page; decisions saved as a sheet review import reads); runs until Ctrl-C",
  options: {
    port: string('p', `${REVIEW_PORT}: a free port`, 'the port to listen on'),
    host: string('h', '127.0.0.1', 'the address to listen on'),
    annotator: string('id', 'your user name, else reviewer', 'who is reviewing: their decisions file and their share of the queue'),
    requeue: flag('take your share of the latest exported queue instead of the queue kept from your first session'),
  },
};

export const CHECK_NESTOOLS: CommandSpec = {
  path: ['check', 'nestools'],
  usage: 'toolkiln check nestools <file.py|file.jsonl|folder>… [--strict] [--stats [--reference file.jsonl]] [--json]',
  summary: 'consistency check of NesTools records (.jsonl, .json) or generated Python programs (.py; .md / .txt holding a code block): exit 0 all pass, 1 some fail, 2 unreadable, empty or of another kind',
  options: {
    strict: flag('warnings (type mismatches, unused stubs, docstring disagreements) fail a record too'),
    stats: flag('also print the statistics of what was checked, beside the reference'),
    reference: string('file.jsonl', '../shared/data/reference/nestools/test_data.jsonl beside the project, when there', 'the NesTools file the statistics are compared with (with --stats)'),
  },
};

/** What `tools cluster` does unless its flags say otherwise. */
export const CLUSTER_DEFAULTS = { threshold: 0.25, linkage: 'average', by: 'name+parameters', mode: 'auto', seed: 0, top: 20 } as const;

export const TOOLS_CLUSTER: CommandSpec = {
  path: ['tools', 'cluster'],
  usage:
    'toolkiln tools cluster <tools.jsonl> [--threshold t | --clusters k] [--linkage single|complete|average] [--by name|name+parameters|description] [--mode auto|exact|blocked] [--seed n] [--model-path dir] [--plot out.html] [--top n] [--json]',
  summary: 'cluster a tool library hierarchically: clusters, sizes, reduction ratio, silhouette, and a 2-D plot',
  options: {
    threshold: string('t', `${CLUSTER_DEFAULTS.threshold}; none with --clusters`, 'cosine distance at or below which tools join one cluster'),
    clusters: string('k', 'none', 'cut the hierarchy into k clusters instead of at a distance (exact mode)'),
    linkage: string('single|complete|average', CLUSTER_DEFAULTS.linkage, 'the distance between two clusters: of their closest, farthest or average members'),
    by: string('name|name+parameters|description', CLUSTER_DEFAULTS.by, 'what is embedded: tool names, names (¾) with parameter names (¼), or descriptions'),
    mode: string('auto|exact|blocked', CLUSTER_DEFAULTS.mode, 'exact: all pairs; blocked: within blocks, for large libraries; auto: exact up to 20,000 tools'),
    seed: string('n', String(CLUSTER_DEFAULTS.seed), 'seed of the blocks, the silhouette sample and the plot'),
    'model-path': string('dir', 'none: the built-in lexical embedder', 'a local transformers model folder to embed with (config.json, tokenizer.json, onnx/model.onnx)'),
    plot: string('out.html', 'none', 'write a 2-D plot of the clusters to this HTML file'),
    top: string('n', String(CLUSTER_DEFAULTS.top), 'clusters of more than one tool listed, largest first'),
  },
};

/** What `tools import` does unless its flags say otherwise. */
export const TOOLS_IMPORT_DEFAULTS = { kind: 'auto', timeoutMs: 20_000 } as const;

export const TOOLS_IMPORT: CommandSpec = {
  path: ['tools', 'import'],
  usage: 'toolkiln tools import (<file|folder>… [--kind auto|library|mcp|openapi|functions] | --command cmd [--arg a]…) [--name server] --out tools.jsonl [--report report.json] [--timeout ms] [--json]',
  summary: 'make a tool library (JSONL of ToolSpec) from MCP tools/list answers or TOUCAN server files, a live MCP server over stdio, OpenAPI 3 documents or OpenAI tool lists, with a report of every tool',
  options: {
    out: string('tools.jsonl', 'none: required', 'the tool library to write, one ToolSpec per line (a recipe\'s tools.sources takes it)'),
    report: string('report.json', '<out> with .report.json for .jsonl', 'the report: every tool with its outcome, reason and changes, and the counts'),
    kind: string('auto|library|mcp|openapi|functions', TOOLS_IMPORT_DEFAULTS.kind, 'what the files hold (auto: read from each file\'s content)'),
    name: string('server', "the file's own (server name, spec title), else its file name", 'the server or spec the tools are credited to'),
    command: string('cmd', 'none', 'a live MCP server to list over stdio: the program (with --arg for its arguments, --name for its name)'),
    arg: { type: 'string', multiple: true, value: 'a', byDefault: 'none', help: 'an argument of --command (repeat it)' },
    timeout: string('ms', String(TOOLS_IMPORT_DEFAULTS.timeoutMs), "how long a live server may take to start and list its tools"),
  },
};

export const CONFIG_SHOW: CommandSpec = {
  path: ['config', 'show'],
  usage: 'toolkiln config show <pipeline> [--config f] [--json]',
  summary: "print a recipe's resolved config as JSON: its defaults, or a --config file laid over them (save it, edit it, pass it to run --config)",
  options: { config: string('file', 'none', 'a JSON config file to lay over the defaults') },
};
