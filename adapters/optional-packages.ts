/**
 * Packages bridle uses for one feature each and does not install with
 * itself: the Postgres driver and the OpenTelemetry exporters are optional
 * peer dependencies (ADR 0070), so an install that needs neither stays at
 * the footprint `docs/dependencies.md` states. A feature whose packages are
 * missing fails with one named error that says what to install; nothing
 * else in bridle notices they are gone.
 */

/** Each feature's packages, with the ranges `package.json`'s `peerDependencies` give (a test keeps the two equal). */
export const OPTIONAL_PACKAGES = {
  'the Postgres store': { pg: '^8.23.1' },
  'OpenTelemetry export': {
    '@opentelemetry/api': '^1.9.1',
    '@opentelemetry/exporter-trace-otlp-http': '^0.223.1',
    '@opentelemetry/otlp-exporter-base': '^0.223.1',
    '@opentelemetry/otlp-transformer': '^0.223.1',
    '@opentelemetry/resources': '~2.12.1',
    '@opentelemetry/sdk-metrics': '~2.12.1',
  },
} as const satisfies Record<string, Record<string, string>>;

export type OptionalFeature = keyof typeof OPTIONAL_PACKAGES;

export class PackageMissingError extends Error {
  readonly code = 'PACKAGE_MISSING';
  /** The command that installs what `feature` needs, beside bridle. */
  readonly install: string;
  constructor(
    readonly feature: OptionalFeature,
    readonly missing: string,
    options?: { cause?: unknown },
  ) {
    const specs = Object.entries(OPTIONAL_PACKAGES[feature]).map(([name, range]) => `${name}@${range}`);
    const install = `npm install ${specs.join(' ')}`;
    super(`${feature} needs the package ${missing}, which is not installed (an optional peer of bridle): ${install}`, options);
    this.name = 'PackageMissingError';
    this.install = install;
  }
}

/** The package a failed import could not find, when that is why it failed. */
function missingPackage(err: unknown, feature: OptionalFeature): string | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  // Any of the feature's packages, or one of theirs (`@opentelemetry/sdk-trace`, `pg-pool`) that an install left out.
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
  const ours = Object.keys(OPTIONAL_PACKAGES[feature]).find((p) => named === p || named?.startsWith(`${p}/`));
  return ours ?? named;
}

/**
 * Contract: resolves with what `load` imports; when the import fails because a package is not installed, rejects with a
 * `PackageMissingError` naming the feature and the install command; any other failure rejects as it is.
 */
export async function importFor<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const missing = missingPackage(err, feature);
    throw missing === undefined ? err : new PackageMissingError(feature, missing, { cause: err });
  }
}
