/** `bridle config [--dump] [--json] [--profile <name>] [--patch <file>] [setting flags]`: check the config file, or print the composed product. */
import { bridleHome } from '../home.js';
import { composeProduct, type SettingFlags } from '../settings.js';
import { dumpJson, dumpOf, dumpYaml } from './dump.js';
import { loadConfig } from './load.js';

export interface ConfigCommandFlags extends SettingFlags {
  dump?: boolean;
  json?: boolean;
}

/** Contract: exit 0 with the dump on `out` (warnings also on `err`); a bad config file, flag, profile or row throws `UsageError` (exit 2). */
export async function configCommand(
  flags: ConfigCommandFlags,
  out: { write(s: string): unknown } = process.stdout,
  err: { write(s: string): unknown } = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (!flags.dump) {
    // Loading checks it: a bad file fails here as it would at `bridle run`.
    const loaded = loadConfig(bridleHome(env));
    out.write(`config file: ${loaded.path} (${loaded.exists ? 'valid' : 'not found'})\nbridle config --dump prints the composed product: every row, and the layer it came from\n`);
    return 0;
  }
  const { dump: _dump, json, ...settingFlags } = flags;
  const product = await composeProduct(settingFlags, { env });
  for (const w of product.warnings) err.write(`bridle: warning: ${w}\n`);
  const d = dumpOf(product, { env, tty: Boolean(process.stdin.isTTY) });
  out.write(json ? dumpJson(d) : dumpYaml(d));
  return 0;
}
