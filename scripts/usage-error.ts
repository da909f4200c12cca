/** A mistake in how the CLI was called: it prints the message and exits with code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
