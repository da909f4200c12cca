// Small formatting helpers shared by the terminal renderings.

const useColor = process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';

function paint(code: number) {
  return (text: string) => (useColor ? `\u001b[${code}m${text}\u001b[0m` : text);
}

export const green = paint(32);
export const red = paint(31);
export const yellow = paint(33);
export const bold = paint(1);
export const dim = paint(2);

/** Visible length, ignoring colour codes. */
export function visibleLength(text: string): number {
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleLength(text)));
}

export function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - visibleLength(text))) + text;
}

export function integer(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function ratio(value: number): string {
  return `${value >= 10 ? value.toFixed(1) : value.toFixed(2)}x`;
}

export function percent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

export function signedPercent(fraction: number): string {
  if (!Number.isFinite(fraction)) return 'n/a';
  // Under one percent, a decimal: a margin of -0.03% must not read "-0%" beside a ratio that rounds to the bound.
  const points = fraction * 100;
  const size = Math.abs(points);
  const digits = size === 0 || size >= 0.95 ? 0 : size >= 0.1 ? 1 : 2;
  return `${fraction >= 0 ? '+' : ''}${points.toFixed(digits)}%`;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Rows of cells as aligned columns; `right` says which columns align right. */
export function table(header: string[], rows: string[][], right: boolean[] = []): string {
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right[i] ? padStart(cell, widths[i]!) : padEnd(cell, widths[i]!)))
      .join('  ')
      .trimEnd();
  return [dim(line(header)), ...rows.map(line)].join('\n');
}

/** A horizontal bar of `width` cells at full scale, with eighth-cell resolution. */
export function bar(value: number, max: number, width = 40): string {
  if (!(max > 0) || !(value > 0)) return '';
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  const partial = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8]!;
  return '█'.repeat(Math.floor(eighths / 8)) + partial;
}

/** One block per value, scaled to the largest: "▇▆▅▄▃▂". Empty when there is nothing to draw. */
export function sparkline(values: number[]): string {
  const max = Math.max(...values, 0);
  if (!(max > 0)) return '';
  const blocks = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
  return values.map((v) => blocks[Math.min(7, Math.max(0, Math.round((v / max) * 7)))]).join('');
}
