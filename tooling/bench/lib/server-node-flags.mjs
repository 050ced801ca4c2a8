// Node flags and environment the server runs with (package.json "start"): benchmark children that stand for a server
// process start with the same ones, so their memory figures are the ones a user gets. Keep both lists equal.
// --max-semi-space-size=2: V8's young generation grows to 16 MiB per semi-space by default (32-48 MiB committed) in a
// process that streams; 2 MiB collects the short-lived stream garbage sooner, and a directory backup's peak RSS went
// from 190 to 147 MiB at the same speed (docs/benchmarks.md, "Young generation size").
// --max-old-space-size=1536: with its default ceiling (a quarter of the machine's memory, up to 4 GiB) V8 lets the old
// generation grow to up to four times what survived its last full collection before it collects again; below a 2 GiB
// ceiling it uses a smaller factor (1.8 at 1.5 GiB). A backup of 50,000 small files left up to 100 MiB of dead
// per-file objects in a heap whose live part was under 50 MiB (docs/benchmarks.md, "Runs 5-7", old generation ceiling).
// The heap growth the server sets itself at startup (apps/server/src/heap-settings.ts, HOLDFAST_HEAP_GROWING_PERCENT)
// is not a flag here: the benchmark children call the same applyServerHeapSettings (holdfast-run.mjs).
// HOLDFAST_BENCH_CHILD_NODE_ARGS adds flags to the benchmark children only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`;
// NODE_OPTIONS refuses --cpu-prof).
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=2', '--max-old-space-size=1536', ...(process.env.HOLDFAST_BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];

// glibc's allocator, read once at process start (docs/benchmarks.md, "glibc allocator settings"):
// MALLOC_ARENA_MAX=2: one arena per core instead of up to eight per core; each thread pool thread that compresses or
// hashes otherwise keeps an arena of its own with freed blocks in it.
// MALLOC_MMAP_THRESHOLD_=131072: blocks of 128 KiB and more (read buffers, compression blocks, frames) are mapped and
// returned to the system when freed. Without it glibc raises the threshold as such blocks are freed and keeps them
// in its heap, where they count as resident memory.
export const SERVER_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };
