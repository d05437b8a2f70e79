/** Polls until `probe` answers something other than undefined or false; fails after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
