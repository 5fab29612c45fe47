import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { formatTable } from '../../core/table.ts';
import { DatasetStore, type VersionRef } from '../../core/store.ts';
import { pipelines } from '../../pipelines/index.ts';
import type { AgreementReport } from '../../review/agreement.ts';
import { startReviewServer } from '../../review/app/server.ts';
import { openReviewSession } from '../../review/app/session.ts';
import { describeCarry } from '../../review/carry.ts';
import { exportReview, REVIEW_FORMATS } from '../../review/export.ts';
import { importReview, reviewAgreement, type SheetFile } from '../../review/import.ts';
import { describeDecision, importToolReview, isToolSheetFile } from '../../review/tool-import.ts';
import { DEFAULT_SEED } from '../../core/run.ts';
import { gatewayFromFlags } from '../gateway.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';
import type { ImportProblem } from '../../review/sources.ts';
import type { Command, Io, Values } from '../command.ts';
import { choiceFlag, intFlag, needPositionals, numberFlag, stringFlag } from '../flags.ts';
import { outputFolder } from '../output-paths.ts';
import { SEED_RANGE } from '../../core/seed.ts';
import { REVIEW_AGREEMENT, REVIEW_EXPORT, REVIEW_EXPORT_DEFAULTS, REVIEW_IMPORT, REVIEW_PORT, REVIEW_SERVE } from '../command-specs.ts';

/** Problems printed in human mode before "… and n more". */
const SHOWN_PROBLEMS = 50;

export const reviewExportCommand: Command = {
  ...REVIEW_EXPORT,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const format = choiceFlag(values, 'format', REVIEW_FORMATS);
    if (!format) throw new UserError(`--format is required: one of ${REVIEW_FORMATS.join(', ')}`);
    const annotators = intFlag(values, 'annotators', { min: 1, max: 100 }) ?? REVIEW_EXPORT_DEFAULTS.annotators;
    const overlap = numberFlag(values, 'overlap', { min: 0, max: 1 }) ?? REVIEW_EXPORT_DEFAULTS.overlap;
    const out = stringFlag(values, 'out');
    const outDir = out === undefined ? undefined : outputFolder(out, '--out', io);
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    store.assertIntact(ref);
    const result = exportReview({
      store,
      ref,
      format,
      outDir,
      annotators,
      overlap,
      raters: intFlag(values, 'raters', { min: 2 }) ?? REVIEW_EXPORT_DEFAULTS.raters,
      selection: { randomRate: numberFlag(values, 'rate', { min: 0, max: 1 }), seed: intFlag(values, 'seed', SEED_RANGE), maxItems: intFlag(values, 'limit', { min: 1 }) },
      pipeline: recipeOf(store, ref),
    });
    if (io.json) {
      io.out(JSON.stringify(result));
      return 0;
    }
    const c = result.counts;
    io.out(`${result.dataset}: ${result.items} item(s) to review (${c.failedChecks} failed checks, ${c.tagged} tagged, ${c.random} random; ${Object.entries(c.byCategory).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`);
    io.out(`per reason: ${Object.entries(c.byReason).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
    io.out(result.toolSheet ? `tool sheet: ${result.toolSheet.rows} tool-level question(s) (merges, conflicts) in ${result.toolSheet.file}` : 'no tool-level questions');
    if (result.sheets.length > 1) io.out(`${result.overlapItems} item(s) given to more than one annotator`);
    io.out(`queue: ${result.queueFile}`);
    for (const file of result.files) io.out(`wrote ${file}${sheetNote(result.sheets.find((s) => s.file === file))}`);
    return 0;
  },
};

function sheetNote(sheet: { annotator: string | null; items: number } | undefined): string {
  return sheet ? ` (${sheet.items} item(s)${sheet.annotator ? ` for ${sheet.annotator}` : ''})` : '';
}

/** The recipe that published a version (its checks re-run on edits); none for hand-made datasets. */
function recipeOf(store: DatasetStore, ref: VersionRef) {
  return pipelines[store.manifest(ref).pipeline];
}

/** `<name>@v <file…>`: the version and the sheets (paths as written, resolved from the current folder). */
function versionAndSheets(positionals: string[], io: Io, usage: string): { store: DatasetStore; ref: VersionRef; files: SheetFile[] } {
  if (positionals.length < 1) throw new UserError(`missing argument: usage: ${usage}`);
  if (positionals.length < 2) throw new UserError('give at least one sheet: a .csv sheet, a Label Studio .json export or Argilla records (.json)');
  const store = new DatasetStore(io.home, { warn: io.err });
  const ref = store.resolve(positionals[0]);
  store.assertIntact(ref);
  return { store, ref, files: positionals.slice(1).map((p) => ({ path: resolve(io.cwd, p), shown: p })) };
}

function printProblems(problems: ImportProblem[], io: Io): void {
  for (const p of problems.slice(0, SHOWN_PROBLEMS)) {
    const at = [p.row === null ? null : p.record ? `record ${p.row} ${p.record}${p.annotation ? ` response ${p.annotation}` : ''}` : p.annotation ? `task ${p.row} annotation ${p.annotation}` : `row ${p.row}`, p.column ? `column ${p.column}` : null].filter(Boolean).join(', ');
    io.err(`  ${p.file}${at ? ` (${at})` : ''}: ${p.message}`);
  }
  if (problems.length > SHOWN_PROBLEMS) io.err(`  … and ${problems.length - SHOWN_PROBLEMS} more (see the report, or --json)`);
}

function fmt(value: number | null): string {
  return value === null ? '-' : value.toFixed(3);
}

function agreementLines(agreement: Omit<AgreementReport, 'perItem'>): string[] {
  if (!agreement.items) return [];
  const lines = [
    `agreement over ${agreement.items} item(s) with 2+ annotators: all agree ${fmt(agreement.observed)}, NesTools p ${fmt(agreement.nestoolsP)}, Fleiss' κ ${fmt(agreement.fleiss)}`,
  ];
  if (agreement.cohen.length) lines.push(formatTable(['annotator a', 'annotator b', 'items', 'agree', "Cohen's κ"], agreement.cohen.map((p) => [p.a, p.b, String(p.items), fmt(p.observed), fmt(p.kappa)])));
  return lines;
}

export const reviewImportCommand: Command = {
  ...REVIEW_IMPORT,
  async run(positionals, values, io) {
    const { store, ref, files } = versionAndSheets(positionals, io, this.usage);
    const toolSheets = files.filter((f) => isToolSheetFile(f.path));
    if (toolSheets.length) return importToolSheets(store, ref, files, toolSheets.length, values, io);
    const result = importReview({ store, ref, files, skipInvalid: values['skip-invalid'] === true, pipeline: recipeOf(store, ref) });
    const code = result.status === 'published' || result.status === 'existing' ? 0 : result.status === 'needs-adjudication' ? 3 : 2;
    if (io.json) {
      io.out(JSON.stringify(result));
      if (code) io.err(`toolkiln: ${statusLine(result.status, result.dataset, result.problems.length)}`);
      return code;
    }
    const c = result.counts;
    if (result.problems.length) {
      io.err(`${result.problems.length} problem(s) in ${c.invalid} row(s):`);
      printProblems(result.problems, io);
      if (result.problemsFile) io.err(`all problems: ${result.problemsFile}`);
    }
    io.out(`${c.rows} row(s) read from ${c.files} file(s): ${c.decided} decided, ${c.pending} left blank, ${c.invalid} invalid${result.status === 'invalid' ? '' : c.invalid ? ' (skipped)' : ''}`);
    for (const line of agreementLines(result.agreement)) io.out(line);
    if (result.status === 'published' || result.status === 'existing') {
      io.out(`${c.items} item(s): ${c.accepted} accepted, ${c.rejected} rejected, ${c.edited} edited (${c.adjudicated} adjudicated)`);
      io.out(result.status === 'published' ? `published ${ref.name}@${result.newVersion} (parent ${ref.version}); ${result.dataset} is unchanged` : `${ref.name}@${result.newVersion} already holds exactly these decisions: nothing new published`);
      for (const carry of result.carried) io.out(describeCarry(ref.name, carry));
    } else if (result.status === 'needs-adjudication') {
      io.err(`${c.disagreements} item(s) where annotators disagree: fill the adjudication sheet ${result.adjudicationSheet}`);
      io.err(`then import it together with the annotators' sheets (its decisions win)`);
    }
    io.out(`report: ${result.report}`);
    if (code) io.err(`toolkiln: ${statusLine(result.status, result.dataset, result.problems.length)}`);
    return code;
  },
};

/** Tool sheets: the recipe runs again with the decisions (with the version's seed, and --llm / --model as `run` takes them). */
async function importToolSheets(store: DatasetStore, ref: VersionRef, files: SheetFile[], toolSheets: number, values: Values, io: Io): Promise<number> {
  if (toolSheets < files.length) throw new UserError('give tool sheets and sample sheets in separate imports: tool decisions run the recipe again and publish a new version; export its sample sheets after');
  if (values['skip-invalid'] === true) throw new UserError('--skip-invalid does not apply to tool sheets: a tool decision changes the whole version, so every row must be valid');
  const manifest = store.manifest(ref);
  const llm = gatewayFromFlags(values, io.env, io.home, typeof manifest.stats.seed === 'number' ? manifest.stats.seed : DEFAULT_SEED, io.err, io.cwd);
  try {
    const result = await importToolReview({ store, ref, files, pipeline: pipelines[manifest.pipeline], llm, home: io.home, projectDir: PROJECT_DIR, cwd: io.cwd, log: io.err, progress: { quiet: io.json || values.quiet === true } });
    if (io.json) {
      io.out(JSON.stringify({ ...result, decisions: result.decisions.map((d) => ({ ...d.decision, annotators: d.answers.map((a) => a.annotator) })) }));
      return 0;
    }
    const c = result.counts;
    io.out(`${c.rows} row(s) read from ${c.files} tool sheet(s): ${c.decided} of ${c.questions} question(s) decided, ${c.pending} left blank`);
    for (const d of result.decisions) io.out(`  ${describeDecision(d.decision)}`);
    io.out(result.status === 'published' ? `published ${ref.name}@${result.newVersion} (parent ${ref.version}, the recipe run again with these decisions); ${result.dataset} is unchanged` : `${ref.name}@${result.newVersion} already holds exactly these decisions: nothing new published`);
    for (const carry of result.carried) io.out(describeCarry(ref.name, carry));
    return 0;
  } finally {
    await llm.close();
  }
}

function statusLine(status: string, dataset: string, problems: number): string {
  if (status === 'invalid') return `nothing applied to ${dataset}: ${problems} problem(s) found; fix them, or re-run with --skip-invalid to apply the valid rows`;
  if (status === 'needs-adjudication') return `nothing applied to ${dataset}: annotators disagree; adjudicate first`;
  return `nothing applied to ${dataset}: the sheets hold no decisions (fill the decision column: accept, reject or edit)`;
}

export const reviewAgreementCommand: Command = {
  ...REVIEW_AGREEMENT,
  async run(positionals, values, io) {
    const out = stringFlag(values, 'out');
    const outDir = out === undefined ? undefined : outputFolder(out, '--out', io);
    const { store, ref, files } = versionAndSheets(positionals, io, this.usage);
    const result = reviewAgreement(store, ref, files, { outDir, pipeline: recipeOf(store, ref) });
    if (io.json) {
      io.out(JSON.stringify(result));
      return 0;
    }
    if (result.problems.length) {
      io.err(`${result.problems.length} problem(s); rows with problems are left out of the figures:`);
      printProblems(result.problems, io);
    }
    const lines = agreementLines(result.agreement);
    io.out(lines.length ? lines.join('\n') : `${result.dataset}: no item was answered by two or more annotators`);
    if (result.adjudicationSheet) io.out(`${result.disagreements} disagreement(s): adjudication sheet ${result.adjudicationSheet}`);
    return 0;
  },
};

export const reviewServeCommand: Command = {
  ...REVIEW_SERVE,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const port = intFlag(values, 'port', { min: 0, max: 65535 }) ?? REVIEW_PORT;
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    store.assertIntact(ref);
    const session = openReviewSession({ store, ref, annotator: stringFlag(values, 'annotator'), pipeline: recipeOf(store, ref), requeue: values.requeue === true });
    try {
      const server = await startReviewServer({ session, port, host: stringFlag(values, 'host') });
      // Listening for signals before the address is printed: whoever reads it may stop the server at once.
      const stopped = untilStopped();
      const items = session.kinds.flatMap((k) => k.summaries());
      const files = session.kinds.map((k) => k.file);
      if (session.queueNote) io.err(session.queueNote);
      if (io.json) io.out(JSON.stringify({ dataset: session.dataset, annotator: session.annotator, url: server.url, queueFile: session.queueFile, queueNote: session.queueNote, files, items: items.length, decided: items.filter((i) => i.decision).length }));
      else {
        io.out(`${session.dataset}: ${items.length} item(s) for ${session.annotator}, ${items.filter((i) => i.decision).length} decided`);
        io.out(`open ${server.url}`);
        for (const file of files) io.out(`decisions: ${file} (import with: toolkiln review import ${session.dataset} ${file})`);
        io.out('stop with Ctrl-C');
      }
      await stopped;
      await server.close();
    } finally {
      session.close();
    }
    return 0;
  },
};

/** Resolves on Ctrl-C or a termination signal. */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Wired into bin/cli.ts's `commands`. */
export const reviewCommands: Command[] = [reviewExportCommand, reviewImportCommand, reviewAgreementCommand, reviewServeCommand];
