import type { BenchCell, BenchSection } from './bench-section.ts';

function cellText(cell: BenchCell): string {
  return typeof cell === 'number' ? cell.toLocaleString('en-US', { maximumFractionDigits: 2 }) : cell;
}

/** One section as a plain-text table with its targets and notes (what `npm run bench` prints). */
export function formatSection(section: BenchSection, index: number): string {
  const rows = section.rows.map((row) => row.map(cellText));
  const widths = section.columns.map((column, i) =>
    Math.max(column.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const lines = [
    `${index}. ${section.title}`,
    line(section.columns),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
  ];
  for (const target of section.targets) {
    lines.push(
      `  ${target.holds ? 'target met ' : 'target MISSED'}  ${target.name}: ${target.measured} (target ${target.target})`,
    );
  }
  for (const note of section.notes) lines.push(`  · ${note}`);
  return lines.join('\n');
}

/** Every target of the run that did not hold, as lines for the summary. */
export function missedTargets(sections: readonly BenchSection[]): string[] {
  return sections.flatMap((section) =>
    section.targets
      .filter((target) => !target.holds)
      .map((target) => `${section.title} — ${target.name}: ${target.measured} (target ${target.target})`),
  );
}
