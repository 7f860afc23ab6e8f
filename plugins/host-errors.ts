/** What the plugin host throws, naming who is at fault: a plugin that failed to mount, two providers of one service, a service nothing provides. */
export class PluginMountError extends Error {
  constructor(
    readonly plugin: string,
    override readonly cause: unknown,
  ) {
    super(`plugin ${plugin} failed to mount: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'PluginMountError';
  }
}

export class DuplicateProviderError extends Error {
  constructor(
    readonly service: string,
    readonly first: string,
    readonly second: string,
  ) {
    super(`service ${service} has two providers: ${first} and ${second} (one provider per service)`);
    this.name = 'DuplicateProviderError';
  }
}

export class MissingServiceError extends Error {
  constructor(
    readonly service: string,
    readonly asker: string,
  ) {
    super(`${asker} asked for service ${service}, which nothing provides`);
    this.name = 'MissingServiceError';
  }
}
