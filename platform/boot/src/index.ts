export { composeHoldfast, type ComposeOptions, type ComposedHoldfast, type HttpOptions } from './compose.js';
export { CORE_TOKENS, type CoreServices } from './core-services.js';
export { pinScheduleLocale, DATE_LOCALE } from './date-locale.js';
