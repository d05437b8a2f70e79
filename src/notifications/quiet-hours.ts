/**
 * Quiet hours: a daily window, in the owner's time zone, during which notifications are not sent
 * to destinations. They still land in the inbox at once; the sends wait for the window's end (a
 * ping at 07:00 rather than none), which is what "do not disturb" means on a phone.
 */
export interface QuietHours {
  /** "HH:MM", 24-hour clock, local time. */
  start: string;
  end: string;
  /** IANA time zone, e.g. "Europe/Berlin". */
  timezone: string;
}

export const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const minutesOf = (clock: string) => {
  const [, h, m] = CLOCK_TIME.exec(clock)!;
  return Number(h) * 60 + Number(m);
};

/** Minutes since local midnight at `at` in `zone`. */
function localMinutes(at: Date, zone: string): { minutes: number; seconds: number } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { minutes: get('hour') * 60 + get('minute'), seconds: get('second') };
}

/**
 * When the quiet window that `at` falls in ends, or undefined when `at` is outside it (or the
 * window is empty). A window may span midnight (22:00 to 07:00).
 */
export function quietUntil(quiet: QuietHours | null | undefined, at: Date): Date | undefined {
  if (!quiet) return undefined;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return undefined;
  const now = localMinutes(at, quiet.timezone);
  const inside = start < end ? now.minutes >= start && now.minutes < end : now.minutes >= start || now.minutes < end;
  if (!inside) return undefined;
  const minutesLeft = (end - now.minutes + 1440) % 1440;
  // Whole minutes from the start of the current minute; a DST jump inside the window moves the
  // end by that hour at most, which a notification held overnight can bear.
  return new Date(at.getTime() - now.seconds * 1000 - (at.getTime() % 1000) + minutesLeft * 60_000);
}
