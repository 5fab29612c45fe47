import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError, messageOf } from '../../core/errors.ts';

/** The `*.json` files under a folder (sub-folders included), sorted, relative to it. */
export function conversationFiles(dir: string, prefix = ''): string[] {
  let entries: string[];
  try {
    entries = readdirSync(join(dir, prefix)).sort();
  } catch (error) {
    throw new UserError(`${join(dir, prefix)}: cannot read the folder (${messageOf(error)}); give a folder of ToolTalk conversation files`);
  }
  return entries.flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry}` : entry;
    if (statSync(join(dir, relative)).isDirectory()) return conversationFiles(dir, relative);
    return entry.endsWith('.json') ? [relative] : [];
  });
}

