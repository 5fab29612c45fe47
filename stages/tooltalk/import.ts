import { conversationFiles } from './conversation-files.ts';
import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { Sample } from '../../core/records.ts';
import { jsonErrorMessage, parseJsonText, readSourceText } from '../../core/source-files.ts';
import { sourceStage, type SourceStage } from '../../core/stage.ts';
import { conversationToSample, parseConversationFile } from './conversation.ts';
import { attachDatabases, readDatabasesFolder } from './database-report.ts';
import { decimalKeys } from '../../core/python-json.ts';

/** One released conversation file → a Sample; files under an `easy` folder are category `easy`. */
export function importConversationFile(dir: string, file: string): Sample {
  const path = join(dir, file);
  const text = readSourceText(path);
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
      // A copied file would be the same conversation twice (ToolTalk keys its results by conversation id).
      const seen = new Map<string, string>();
      for (const file of conversationFiles(dir)) {
        const sample = importConversationFile(dir, file);
        const id = sample.meta.source?.id as string; // conversationToSample sets it
        const first = seen.get(id);
        if (first !== undefined) throw new UserError(`${join(dir, file)}: conversation_id "${id}" was already imported from ${join(dir, first)}; remove the copy or give it its own conversation_id`);
        seen.set(id, file);
        yield sample;
      }
    },
  });
}
