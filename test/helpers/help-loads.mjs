// Runs `toolkiln <argv…>` for each argv list given as JSON in argv[2], one after another in this
// one process, and prints as JSON which project files each call loaded that earlier calls had not.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register as registerTsx } from 'tsx/esm/api';

const root = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'tk-help-loads-'));
const log = join(scratch, 'modules.log');
writeFileSync(log, '');
registerTsx();
register(pathToFileURL(fileURLToPath(new URL('./module-log-hook.mjs', import.meta.url))).href, { data: { log } });

const loaded = () => new Set(readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url)));

/** The project files and the packages loaded since `before`. */
function loadedSince(before) {
  const added = [...loaded()].filter((file) => !before.has(file));
  return {
    files: added.filter((file) => file.startsWith(root) && !file.includes('/node_modules/')).map((file) => file.slice(root.length)),
    packages: [...new Set(added.map((file) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1]).filter((name) => name && name !== 'tsx'))],
  };
}

const start = loaded();
const { main } = await import('../../bin/cli.ts');
const startup = loadedSince(start);
const results = [];
for (const argv of JSON.parse(process.argv[2])) {
  const before = loaded();
  const out = [];
  const code = await main(argv, { out: (text) => out.push(text), err: (text) => out.push(text), env: {}, home: scratch, cwd: scratch });
  results.push({ argv, code, ...loadedSince(before), out: out.join('\n') });
}
process.stdout.write(JSON.stringify({ startup, results }));
