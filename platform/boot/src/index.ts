export { composeHoldfast, type ComposeOptions, type ComposedHoldfast, type HttpOptions } from './compose.js';
export { pinScheduleLocale, DATE_LOCALE } from './date-locale.js';
