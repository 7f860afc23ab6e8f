import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importFor, OPTIONAL_PACKAGES, PackageMissingError } from './optional-packages.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};

describe('optional peer packages (ADR 0070)', () => {
  it('are the package\'s optional peers, at the ranges it declares, installed for its own tests and not as dependencies', () => {
    const ours = Object.assign({}, ...Object.values(OPTIONAL_PACKAGES)) as Record<string, string>;
    expect(ours).toEqual(pkg.peerDependencies);
    for (const [name, range] of Object.entries(ours)) {
      expect(pkg.peerDependenciesMeta[name], name).toEqual({ optional: true });
      expect(pkg.devDependencies[name], name).toBe(range);
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
  });

  it('a missing package becomes one named error with the command that installs the feature', async () => {
    const err = await importFor('the Postgres store', () => import('pg-is-not-here-' + 'at-all')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PackageMissingError);
    expect(err).toMatchObject({ code: 'PACKAGE_MISSING', feature: 'the Postgres store', missing: 'pg-is-not-here-at-all', install: 'npm install pg@^8.23.1' });
    expect((err as Error).message).toBe('the Postgres store needs the package pg-is-not-here-at-all, which is not installed (an optional peer of bridle): npm install pg@^8.23.1');
  });

  it('names the feature\'s own package when one of its subpaths is missing, and passes any other failure through as it is', async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/otlp-exporter-base' imported from /x/y.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importFor('OpenTelemetry export', () => Promise.reject(missing))).rejects.toMatchObject({ missing: '@opentelemetry/otlp-exporter-base' });
    const broken = new SyntaxError('Unexpected token');
    await expect(importFor('OpenTelemetry export', () => Promise.reject(broken))).rejects.toBe(broken);
    await expect(importFor('the Postgres store', () => import('pg'))).resolves.toHaveProperty('default');
  });
});
