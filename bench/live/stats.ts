// Small helpers the live benchmark's halves share.
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The p-th percentile of sorted values (0 when there are none). */
export const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
