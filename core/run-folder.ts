/**
 * Files of a run folder (`<home>/.toolkiln/runs/<id>/`) that both the run (core/run.ts) and the run
 * listing (core/runs.ts) name; apart from the run's code so that `toolkiln runs list` loads none of it.
 */
/** Held by the process working in the run. */
export const RUN_LOCK = 'lock';
/** Written when the run ends: published, existing or dry-run. */
export const RUN_OUTCOME = 'outcome.json';
