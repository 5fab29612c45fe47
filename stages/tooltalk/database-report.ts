import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StageContext } from '../../core/stage.ts';
import { DATABASE_NAMES } from './tool.ts';
import { databasesToJson, loadDatabases, type DatabasesJson } from './databases.ts';
import { decimalKeys } from '../../core/python-json.ts';

/**
 * The initial databases a version was made from travel with it as a report
 * (`reports/tooltalk-databases.json`), so `toolkiln export --format tooltalk` writes them (merged with
 * the conversations' overlays) from the version alone.
 */
export const DATABASES_REPORT = 'tooltalk-databases.json';

export interface DatabasesReport {
  databases: DatabasesJson;
  /** Keys whose numbers the database files write as decimals (Python floats). */
  floatKeys: string[];
}

/** Loads and checks the databases folder (a bad file stops the run with one line) and its float keys. */
export function readDatabasesFolder(dir: string): DatabasesReport {
  const databases = databasesToJson(loadDatabases(dir));
  const floatKeys = [...new Set(DATABASE_NAMES.flatMap((name) => decimalKeys(readFileSync(join(dir, `${name}.json`), 'utf8'))))].sort();
  return { databases, floatKeys };
}

export function attachDatabases(ctx: StageContext, report: DatabasesReport): void {
  ctx.attach(DATABASES_REPORT, JSON.stringify(report));
}

/** The report of a published version, or null when the version has none. */
export function readDatabasesReport(versionDir: string): DatabasesReport | null {
  const path = join(versionDir, 'reports', DATABASES_REPORT);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as DatabasesReport) : null;
}
