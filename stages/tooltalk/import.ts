import { readFileSync } from 'node:fs';
import { conversationFiles } from './conversation-files.ts';
import { join } from 'node:path';
import { UserError, messageOf } from '../../core/errors.ts';
import { Sample } from '../../core/records.ts';
import { jsonErrorMessage, parseJsonText } from '../../core/source-files.ts';
import { sourceStage, type SourceStage } from '../../core/stage.ts';
import { conversationToSample, parseConversationFile } from './conversation.ts';
import { attachDatabases, readDatabasesFolder } from './database-report.ts';
import { decimalKeys } from '../../core/python-json.ts';

/** One released conversation file → a Sample; files under an `easy` folder are category `easy`. */
export function importConversationFile(dir: string, file: string): Sample {
  const path = join(dir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UserError(`${path}: cannot read the file (${messageOf(error)})`);
  }
  const parsed = parseJsonText(text);
  if ('error' in parsed) throw new UserError(jsonErrorMessage(path, parsed.error, { todo: 'fix the file' }));
  const conversation = parseConversationFile(parsed.value, path);
  const category = file.split('/').includes('easy') ? 'easy' : 'tooltalk';
  return conversationToSample(conversation, { category, file, floatKeys: decimalKeys(text) });
}

export interface ImportOptions {
  importDir: string;
  databasesDir: string;
}

/** Reads released ToolTalk conversations into canonical samples (config `importDir`). */
export function importConversationsStage(options: ImportOptions): SourceStage<Sample> {
  return sourceStage({
    name: 'import-conversations',
    version: 1,
    output: Sample,
    load: function* (ctx) {
      attachDatabases(ctx, readDatabasesFolder(ctx.resolvePath(options.databasesDir)));
      const dir = ctx.resolvePath(options.importDir);
      for (const file of conversationFiles(dir)) yield importConversationFile(dir, file);
    },
  });
}
