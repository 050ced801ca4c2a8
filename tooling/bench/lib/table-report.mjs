// The figures of the benchmark table (table.mjs): per row the medians and spreads of both sides, the ratio against
// its goal, CPU seconds per GiB of both sides and their ratio, and the peak RSS; printed as a plain table while it
// runs and as one Markdown table to paste as the current table of docs/benchmarks.md.

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const GIB = 1024 ** 3;
// The goals every row shares (issue 42): CPU per GiB against the pipeline's, and the peak RSS of a Holdfast run.
export const CPU_GOAL = 1.25;
export const RSS_GOAL_MIB = 150;

/** Median, spread and CPU of one unit's runs. */
function summarise(runs) {
  const seconds = runs.map((run) => run.seconds);
  const rss = runs.map((run) => run.peakRssKiB).filter(Boolean);
  return {
    median: median(seconds),
    min: Math.min(...seconds),
    max: Math.max(...seconds),
    cpu: median(runs.map((run) => run.cpuSeconds)),
    peakRssMiB: rss.length ? Math.max(...rss) / 1024 : null,
    bytes: median(runs.map((run) => run.bytes ?? 0)) || null,
  };
}

/**
 * One table row's figures from the measured units: `row.holdfast` against `row.against` (a pipeline, or the plain
 * Holdfast run for an encrypted row), per GiB of the part's source. A row whose units did not run says why.
 */
export function rowFigures(row, results, sourceBytes, skipped) {
  const reason = skipped.get(row.holdfast) ?? skipped.get(row.against);
  const h = results.get(row.holdfast);
  const b = results.get(row.against);
  if (reason || !h?.length || !b?.length) return { ...row, skipped: reason ?? 'not run' };
  const holdfast = summarise(h);
  const against = summarise(b);
  const gib = sourceBytes / GIB;
  const ratio = holdfast.median / against.median;
  const cpuRatio = holdfast.cpu / against.cpu;
  return {
    ...row,
    holdfast,
    against,
    ratio,
    met: row.goal === null ? null : ratio <= row.goal,
    cpuPerGiB: { holdfast: holdfast.cpu / gib, against: against.cpu / gib },
    cpuRatio,
    cpuMet: row.encrypted ? null : cpuRatio <= CPU_GOAL,
    rssMet: holdfast.peakRssMiB === null ? null : holdfast.peakRssMiB < RSS_GOAL_MIB,
  };
}

const spread = (side) => `${side.median.toFixed(2)} (${side.min.toFixed(2)}-${side.max.toFixed(2)})`;
const yesNo = (met) => (met === null ? '-' : met ? 'met' : 'NOT met');
const goalText = (row) => (row.goal === null ? 'printed' : `<= ${row.goal}${row.encrypted ? '' : 'x'}`);

/** The cells of one row, shared by the plain and the Markdown table. */
function cells(figures) {
  if (figures.skipped) return [figures.name, figures.againstText, `skipped: ${figures.skipped}`, '', '', '', '', '', '', '', '', ''];
  return [
    figures.name,
    figures.againstText,
    spread(figures.holdfast),
    spread(figures.against),
    `${figures.ratio.toFixed(2)}${figures.encrypted ? '' : 'x'}`,
    goalText(figures),
    yesNo(figures.met),
    figures.cpuPerGiB.holdfast.toFixed(2),
    figures.cpuPerGiB.against.toFixed(2),
    `${figures.cpuRatio.toFixed(2)}x${figures.cpuMet === null ? '' : ` ${yesNo(figures.cpuMet)}`}`,
    figures.holdfast.peakRssMiB === null ? '-' : figures.holdfast.peakRssMiB.toFixed(0),
    yesNo(figures.rssMet),
  ];
}

const HEADER = ['row', 'compared with', 'Holdfast s median (min-max)', 'compared s median (min-max)', 'ratio', 'goal', 'time goal', 'CPU s/GiB Holdfast', 'CPU s/GiB compared', `CPU ratio (<= ${CPU_GOAL}x)`, 'peak RSS MiB', `RSS < ${RSS_GOAL_MIB} MiB`];

/** A plain-text table with padded columns. */
export function plainTable(allFigures) {
  const rows = [HEADER, ...allFigures.map(cells)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ').trimEnd()).join('\n');
}

/** The Markdown table, ready to paste under "Current figures" of docs/benchmarks.md. */
export function markdownTable(allFigures) {
  const escape = (cell) => String(cell).replaceAll('|', '\\|');
  const lines = [HEADER, HEADER.map(() => '---'), ...allFigures.map(cells)];
  return lines.map((row) => `| ${row.map(escape).join(' | ')} |`).join('\n');
}
