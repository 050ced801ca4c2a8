// Preloaded into the server process by the agents scale bench (node --expose-gc -r this): SIGUSR2 runs a full
// collection, so the heap the bench reads afterwards holds live objects only and "heap per agent" is not the noise of
// when the last collection happened. Bench only; the server itself never loads this.
process.on('SIGUSR2', () => globalThis.gc?.());
