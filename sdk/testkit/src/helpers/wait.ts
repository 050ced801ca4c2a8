/** Polls `probe` every 50 ms until it answers true or `timeoutMs` is up; answers the last probe's verdict. */
export async function waitFor(probe: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return probe();
}
