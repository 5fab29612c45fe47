import type { ConfigKey } from '../core/config-doc.ts';
import { loadRecipe, RECIPE_NAMES } from '../pipelines/catalog.ts';

/**
 * What `toolkiln run --help` adds after the flags: the recipes, or with a recipe named, that
 * recipe's config keys (its schema's `.describe()` texts) with their defaults. Loads that recipe only.
 */
export async function recipeHelp(name: string | undefined): Promise<string> {
  if (name === undefined) {
    return [`Pipelines: ${RECIPE_NAMES.join(', ')}`, "toolkiln run <pipeline> --help lists the pipeline's config keys with their defaults."].join('\n');
  }
  const pipeline = await loadRecipe(name);
  const { configKeys } = await import('../core/config-doc.ts');
  const keys = configKeys(pipeline.configSchema, pipeline.configSchema.parse({}));
  return [
    `${name}: ${pipeline.description}`,
    '',
    `Config keys of ${name}, with their defaults. Set any of them in a JSON file given to --config${nestingExample(keys)};`,
    `toolkiln config show ${name} prints all the defaults as such a file. A relative path is read from the current folder, else from the toolkiln folder.`,
    ...keys.map(configKeyLine),
  ].join('\n');
}

/** How a dotted key is written in a config file, shown with the recipe's first nested key (none for a flat config). */
function nestingExample(keys: ConfigKey[]): string {
  const nested = keys.find((key) => key.path.includes('.') && !key.path.includes('[]') && !key.section);
  if (!nested) return '';
  const parts = nested.path.split('.');
  return `, nested as objects (${nested.path} is ${parts.reduceRight((inner, part) => `{"${part}": ${inner}}`, '…')})`;
}

/** `  path = default — description`; an object's line has no value (its keys follow), an unset key says so. */
export function configKeyLine(key: ConfigKey): string {
  const { fallback } = key;
  const value = fallback.kind === 'unset' ? ' (unset)' : fallback.kind === 'required' ? ' (required)' : key.section ? '' : ` = ${JSON.stringify(fallback.value)}`;
  return `  ${key.path}${value} — ${key.description ?? '(not described)'}`;
}
