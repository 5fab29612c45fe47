// Module hook (node:module register) for test/helpers/help-loads.mjs: appends the URL of every
// module loaded to the file `data.log`, before the module runs.
import { appendFileSync } from 'node:fs';

let log;

export function initialize(data) {
  log = data.log;
}

export async function load(url, context, nextLoad) {
  appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
