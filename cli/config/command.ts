/** `bridle config [--dump] [--json] [--profile <name>] [setting flags]`: check the config file, or print the effective configuration. */
import { bridleHome } from '../home.js';
import { loadConfig } from './load.js';
import { dumpJson, dumpYaml } from './dump.js';
import { resolveConfig, type ConfigFlags } from './resolve.js';

export interface ConfigCommandFlags extends ConfigFlags {
  dump?: boolean;
  json?: boolean;
}

/** Contract: exit 0 with the dump on `out`; a bad config file, flag or profile throws `UsageError` (exit 2). */
export function configCommand(flags: ConfigCommandFlags, out: { write(s: string): unknown } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  const home = bridleHome(env);
  if (!flags.dump) {
    // Loading checks it: a bad file fails here as it would at `bridle run`.
    const loaded = loadConfig(home);
    out.write(`config file: ${loaded.path} (${loaded.exists ? 'valid' : 'not found'})\nbridle config --dump prints the effective configuration and where each value comes from\n`);
    return 0;
  }
  const { dump: _dump, json, ...settingFlags } = flags;
  const r = resolveConfig(settingFlags, loadConfig(home), env);
  out.write(json ? dumpJson(r) : dumpYaml(r));
  return 0;
}
