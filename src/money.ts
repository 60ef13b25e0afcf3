/**
 * Amounts of money as people read them, the one formatter every place that
 * shows spend uses (budget reasons, run lines, `wats agent runs`, the status
 * tool, the banner). A run costs cents or less, so a fixed two decimals would
 * hide what matters: amounts keep two significant digits below a dollar
 * ($0.018, $0.0012), and always at least two decimals ($0.50, $2.00).
 *
 * @module
 */

/** The most decimals ever shown (a hundredth of a cent). */
const MAX_DECIMALS = 6;

/** `$0.018`, `$0.0012`, `$0.50`, `$2.00`, `$12.35`. */
export function usd(n: number): string {
  return `$${amount(n, decimalsFor(n))}`;
}

/**
 * `$0.051 of $0.05`: spent against a limit, with enough decimals that two
 * different amounts never read the same ($0.0499 of $0.05, not $0.05 of $0.05).
 */
export function usdOf(used: number, limit: number): string {
  const [u, l] = usdPair(used, limit);
  return `${u} of ${l}`;
}

/** `used` and `limit` formatted as in `usdOf`, for sentences of another shape. */
export function usdPair(used: number, limit: number): [string, string] {
  let d = decimalsFor(used);
  while (d < MAX_DECIMALS && used !== limit && amount(used, d) === amount(limit, d)) d++;
  return [`$${amount(used, d)}`, usd(limit)];
}

/** Two significant digits below 1, never fewer than two decimals. */
function decimalsFor(n: number): number {
  const a = Math.abs(n);
  if (a === 0 || !Number.isFinite(a) || a >= 0.1) return 2;
  return Math.min(MAX_DECIMALS, Math.max(2, 1 - Math.floor(Math.log10(a))));
}

/** `n` with `decimals` decimals, trailing zeros after the second dropped. */
function amount(n: number, decimals: number): string {
  const s = n.toFixed(decimals);
  return decimals <= 2 ? s : s.replace(/(\.\d\d\d*?)0+$/, "$1");
}
