import { DateTime } from 'luxon';
import { AdapterError, isKnownTimeZone } from '@holdfast/sdk';
import type { DateToken } from './pattern.js';

// Fixed English abbreviations: a name must not change with the server's locale.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** The wall-clock fields of `date` in `timezone`; throws a CONFIG error naming a bad zone or date. */
export function wallClock(date: Date, timezone: string): DateTime {
  if (typeof timezone !== 'string' || !isKnownTimeZone(timezone)) {
    throw new AdapterError({ kind: 'naming', id: 'template' }, 'CONFIG', `unknown time zone "${String(timezone)}" (expected an IANA name such as Europe/Berlin)`);
  }
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new TypeError('[naming-template] the naming context has no valid date');
  }
  // A fixed locale: luxon otherwise asks the runtime for the system's through an Intl.DateTimeFormat (see isKnownTimeZone).
  return DateTime.fromMillis(date.getTime(), { zone: timezone, locale: 'en-US', numberingSystem: 'latn' });
}

/** Renders one date token from the wall-clock time. */
export function renderDateToken(token: DateToken, local: DateTime): string {
  switch (token) {
    case 'yyyy':
      return pad(local.year, 4);
    case 'yy':
      return pad(local.year % 100, 2);
    case 'MMM':
      return MONTHS[local.month - 1]!;
    case 'MM':
      return pad(local.month, 2);
    case 'dd':
      return pad(local.day, 2);
    case 'HH':
      return pad(local.hour, 2);
    case 'mm':
      return pad(local.minute, 2);
    case 'ss':
      return pad(local.second, 2);
    case 'SSS':
      return pad(local.millisecond, 3);
  }
}
