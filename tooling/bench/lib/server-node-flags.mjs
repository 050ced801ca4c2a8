// Node flags the server runs with (package.json "start"): benchmark children that stand for a server process start
// with the same ones, so their memory figures are the ones a user gets. Keep both lists equal.
// --max-semi-space-size=2: V8's young generation grows to 16 MiB per semi-space by default (32-48 MiB committed) in a
// process that streams; 2 MiB collects the short-lived stream garbage sooner, and a directory backup's peak RSS went
// from 190 to 147 MiB at the same speed (docs/benchmarks.md, "Young generation size").
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=2'];
