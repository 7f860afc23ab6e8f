/**
 * A product that cannot be composed, by row and layer. Its own module, free of the row schemas (zod), so a
 * process that only reports such an error (`cli/exit-code.ts`) does not load them (ADR 0099).
 */
export class CompositionError extends Error {
  constructor(
    readonly rowId: string,
    readonly layer: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`row ${rowId} (${layer}): ${problem}`, options);
    this.name = 'CompositionError';
  }
}

/** One bundle (or one list of rows) names an id twice: which of the two is meant cannot be told, so nothing is guessed. */
export class DuplicateRowError extends CompositionError {
  constructor(rowId: string, layer: string) {
    super(rowId, layer, 'the id is used twice in this one layer (a later bundle may replace it; one bundle may not say it twice)');
    this.name = 'DuplicateRowError';
  }
}
