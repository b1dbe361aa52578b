/**
 * Date helpers for UI labels: "3 minutes ago" style relative times, date
 * ranges, calendar arithmetic and compact range labels.
 */

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60 * MS_PER_SECOND;
export const MS_PER_HOUR = 60 * MS_PER_MINUTE;
export const MS_PER_DAY = 24 * MS_PER_HOUR;

type RelativeUnit = "second" | "minute" | "hour" | "day" | "week" | "month" | "year";

const RELATIVE_STEPS: Array<{ unit: RelativeUnit; ms: number }> = [
  { unit: "year", ms: 365 * MS_PER_DAY },
  { unit: "month", ms: 30 * MS_PER_DAY },
  { unit: "week", ms: 7 * MS_PER_DAY },
  { unit: "day", ms: MS_PER_DAY },
  { unit: "hour", ms: MS_PER_HOUR },
  { unit: "minute", ms: MS_PER_MINUTE },
  { unit: "second", ms: MS_PER_SECOND },
];

const MONTH_SHORT = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export interface DateRange {
  start: Date;
  end: Date;
}

/**
 * Describe how long ago (or how far ahead) a moment is, in words such as
 * "just now", "5 minutes ago" or "in 2 days". The largest unit that fits at
 * least once is used, and anything under ten seconds counts as "just now".
 */
export function formatRelativeTime(date: Date, now: Date = new Date()): string {
  const diff = date.getTime() - now.getTime();
  const abs = Math.abs(diff);
  if (abs < 10 * MS_PER_SECOND) {
    return "just now";
  }
  for (const step of RELATIVE_STEPS) {
    if (abs >= step.ms) {
      const count = Math.floor(abs / step.ms);
      const label = `${count} ${step.unit}${count === 1 ? "" : "s"}`;
      return diff < 0 ? `${label} ago` : `in ${label}`;
    }
  }
  return "just now";
}

/** Return a new date set to midnight at the start of the same local day. */
export const startOfDay = (date: Date): Date =>
  new Date(date.getFullYear(), date.getMonth(), date.getDate());

/** Return a new date moved by a whole number of days, keeping the local time of day. */
export function addDays(date: Date, days: number): Date {
  const result = new Date(date.getTime());
  result.setDate(result.getDate() + days);
  return result;
}

/**
 * Move a date by whole months. When the target month is shorter, the day
 * is clamped to its last day, so 31 January plus one month is 28 or 29
 * February rather than spilling into March.
 */
export function addMonths(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getDate();
  result.setDate(1);
  result.setMonth(result.getMonth() + months);
  const lastDay = new Date(result.getFullYear(), result.getMonth() + 1, 0).getDate();
  result.setDate(Math.min(day, lastDay));
  return result;
}

/** Count calendar days between two dates, ignoring the time of day. */
export function daysBetween(a: Date, b: Date): number {
  const diff = startOfDay(b).getTime() - startOfDay(a).getTime();
  return Math.round(diff / MS_PER_DAY);
}

/**
 * List every day in a range, inclusive of both ends, as midnight dates.
 * Throws if the end comes before the start, because an empty list would
 * hide that mistake from the caller.
 */
export function eachDayOfRange({ start, end }: DateRange): Date[] {
  const first = startOfDay(start);
  const last = startOfDay(end);
  if (last < first) {
    throw new RangeError("Range end is before its start");
  }
  const days: Date[] = [];
  for (let cursor = first; cursor <= last; cursor = addDays(cursor, 1)) {
    days.push(cursor);
  }
  return days;
}

/** Tell whether a date falls inside a range, both ends included. */
export const isWithinRange = (date: Date, { start, end }: DateRange): boolean =>
  date.getTime() >= start.getTime() && date.getTime() <= end.getTime();

/**
 * Determine whether two ranges share at least one instant. Ranges that only
 * touch at an end point count as overlapping.
 */
export function rangesOverlap(a: DateRange, b: DateRange): boolean {
  return a.start.getTime() <= b.end.getTime() && b.start.getTime() <= a.end.getTime();
}

/**
 * Build a compact human label for a date range, avoiding repetition:
 * "3-9 Mar 2025", "28 Feb - 6 Mar 2025" or "30 Dec 2024 - 5 Jan 2025".
 */
export function formatRangeLabel({ start, end }: DateRange): string {
  const sameYear = start.getFullYear() === end.getFullYear();
  const sameMonth = sameYear && start.getMonth() === end.getMonth();
  const endLabel = `${end.getDate()} ${MONTH_SHORT[end.getMonth()]} ${end.getFullYear()}`;
  if (sameMonth) {
    if (start.getDate() === end.getDate()) {
      return endLabel;
    }
    return `${start.getDate()}-${endLabel}`;
  }
  if (sameYear) {
    return `${start.getDate()} ${MONTH_SHORT[start.getMonth()]} - ${endLabel}`;
  }
  return `${start.getDate()} ${MONTH_SHORT[start.getMonth()]} ${start.getFullYear()} - ${endLabel}`;
}

/**
 * Return the Monday-to-Sunday week that contains a date, which is how most
 * European calendars present weeks.
 */
export function weekContaining(date: Date): DateRange {
  const day = startOfDay(date);
  const offset = (day.getDay() + 6) % 7;
  const start = addDays(day, -offset);
  return { start, end: addDays(start, 6) };
}

/**
 * Parse an ISO calendar date ("2025-03-14") as a local date. The built-in
 * parser treats that format as UTC, which shifts the day for users west of
 * Greenwich; this helper avoids that surprise.
 */
export function parseIsoDate(text: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!match) {
    throw new Error(`Expected YYYY-MM-DD, got "${text}"`);
  }
  const [, year, month, day] = match.map(Number);
  const result = new Date(year, month - 1, day);
  if (result.getMonth() !== month - 1) {
    throw new Error(`Invalid calendar date "${text}"`);
  }
  return result;
}
