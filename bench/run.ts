// `npm run bench -- <name> [args]`: runs bench/<name>.ts (its exported `run(args)`); no name runs them all.
import { readdirSync } from 'node:fs';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const chosen = name ? [name] : available;
for (const bench of chosen) {
  if (!available.includes(bench)) {
    process.stderr.write(`unknown benchmark "${bench}": choose one of ${available.join(', ')}\n`);
    process.exit(2);
  }
  process.stdout.write(`\n## ${bench}\n\n`);
  const module = (await import(`./${bench}.ts`)) as { run: (args: string[]) => Promise<void> };
  await module.run(args);
}
