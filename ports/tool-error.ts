/** A named error for failures a tool, or a seam a tool uses, raises on purpose: `code` is stable, `message` is for the model. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
