export { composeHoldfast, type ComposeOptions, type ComposedHoldfast, type HttpOptions } from './compose.js';
