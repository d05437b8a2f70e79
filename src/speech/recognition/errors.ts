/** The one error type recognisers throw; its message is safe to log (never a key). */
export class RecognitionError extends Error {
  readonly name = 'RecognitionError';
  constructor(
    message: string,
    readonly engine?: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
