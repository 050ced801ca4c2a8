export { createProgram } from './program.js';
export { formatTable, type CliOutput } from './output.js';
