import { resolve } from 'node:path';
import { readConfigFile, resolveConfig } from '../../core/run.ts';
import { loadRecipe } from '../../pipelines/catalog.ts';
import type { Command } from '../command.ts';
import { needPositionals, stringFlag } from '../flags.ts';
import { CONFIG_SHOW } from '../command-specs.ts';

export const configShowCommand: Command = {
  ...CONFIG_SHOW,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const pipeline = await loadRecipe(positionals[0]);
    const configFile = stringFlag(values, 'config');
    const overrides = configFile ? readConfigFile(resolve(io.cwd, configFile), configFile) : undefined;
    const config = resolveConfig(pipeline, overrides, configFile ?? 'config');
    // The config itself is the JSON document either way: what `run --config` reads back.
    io.out(JSON.stringify(config, null, 2));
    return 0;
  },
};
