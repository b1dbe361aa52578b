/**
 * Number formatting for display: grouped numbers, currency, percentages,
 * compact counts ("12.3k"), file sizes and durations.
 */

export interface NumberFormatOptions {
  decimals?: number;
  locale?: string;
}

export const DEFAULT_LOCALE = "en-US";

const BYTE_UNITS_SI = ["B", "kB", "MB", "GB", "TB", "PB"];
const BYTE_UNITS_IEC = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const COMPACT_SUFFIXES: Array<[number, string]> = [
  [1e12, "T"],
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "k"],
];

const formatterCache = new Map<string, Intl.NumberFormat>();

/**
 * Return a cached Intl.NumberFormat for a locale and option set. Creating
 * formatters is surprisingly expensive, and tables can format thousands of
 * cells per render.
 */
function getFormatter(locale: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}|${JSON.stringify(options)}`;
  let formatter = formatterCache.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat(locale, options);
    formatterCache.set(key, formatter);
  }
  return formatter;
}

/** Format a number with locale-specific thousands separators and a fixed number of decimals. */
export function formatNumber(value: number, { decimals = 0, locale = DEFAULT_LOCALE }: NumberFormatOptions = {}): string {
  return getFormatter(locale, {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(value);
}

/**
 * Format an amount of money in a given ISO currency, e.g. 1234.5 in "EUR"
 * for "de-DE" becomes "1.234,50 €". Amounts are expected in major units
 * (euros, not cents).
 */
export function formatCurrency(amount: number, currency: string, locale: string = DEFAULT_LOCALE): string {
  if (!Number.isFinite(amount)) {
    throw new RangeError(`Cannot format non-finite amount ${amount}`);
  }
  return getFormatter(locale, { style: "currency", currency }).format(amount);
}

/**
 * Convert an integer number of minor units (cents) to a formatted currency
 * string. Keeping money as integers avoids floating point drift; this is
 * the one place it turns into a display value.
 */
export function formatCents(cents: number, currency = "USD", locale: string = DEFAULT_LOCALE): string {
  if (!Number.isInteger(cents)) {
    throw new TypeError("Amount in cents must be an integer");
  }
  const digits = getFormatter(locale, { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return formatCurrency(cents / Math.pow(10, digits), currency, locale);
}

/** Format a ratio such as 0.256 as a percentage string like "25.6%". */
export const formatPercent = (ratio: number, decimals = 1, locale: string = DEFAULT_LOCALE): string =>
  getFormatter(locale, {
    style: "percent",
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(ratio);

/**
 * Shorten large counts for badges and axis labels: 950 stays "950", 1234
 * becomes "1.2k" and 5_600_000 becomes "5.6M". Trailing ".0" is dropped.
 */
export function formatCompact(value: number, decimals = 1): string {
  const sign = value < 0 ? "-" : "";
  const abs = Math.abs(value);
  for (const [threshold, suffix] of COMPACT_SUFFIXES) {
    if (abs >= threshold) {
      const scaled = (abs / threshold).toFixed(decimals).replace(/\.0+$/, "");
      return `${sign}${scaled}${suffix}`;
    }
  }
  return `${sign}${abs}`;
}

/**
 * Turn a byte count into a human-readable size such as "1.5 MB". By default
 * uses decimal (SI) units of 1000; pass `binary` for 1024-based KiB/MiB.
 */
export function formatBytes(bytes: number, decimals = 1, binary = false): string {
  if (bytes < 0) {
    throw new RangeError("Byte count cannot be negative");
  }
  const base = binary ? 1024 : 1000;
  const units = binary ? BYTE_UNITS_IEC : BYTE_UNITS_SI;
  if (bytes < base) {
    return `${bytes} ${units[0]}`;
  }
  const exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(base)), units.length - 1);
  const value = bytes / Math.pow(base, exponent);
  return `${value.toFixed(decimals).replace(/\.0+$/, "")} ${units[exponent]}`;
}

/**
 * Describe a duration in milliseconds as "1h 5m", "3m 20s" or "850ms",
 * showing at most the two most significant units.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) {
    return `${Math.round(ms)}ms`;
  }
  const parts: string[] = [];
  let remaining = Math.floor(ms / 1000);
  const units: Array<[number, string]> = [
    [86400, "d"],
    [3600, "h"],
    [60, "m"],
    [1, "s"],
  ];
  for (const [size, label] of units) {
    if (remaining >= size) {
      parts.push(`${Math.floor(remaining / size)}${label}`);
      remaining %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/** Add the English ordinal suffix to a number: 1st, 2nd, 3rd, 4th, 11th, 22nd. */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) {
    return `${n}th`;
  }
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
  }
}

/**
 * Parse a user-typed number that may contain grouping separators or a
 * currency sign, such as "$1,299.99" or "1 299,99" with a comma decimal.
 * Returns NaN when nothing sensible can be read.
 */
export function parseLooseNumber(text: string, decimalSeparator: "." | "," = "."): number {
  const stripped = text.replace(/[^\d.,-]/g, "");
  const normalized =
    decimalSeparator === ","
      ? stripped.replace(/\./g, "").replace(",", ".")
      : stripped.replace(/,/g, "");
  return normalized === "" ? NaN : Number(normalized);
}
