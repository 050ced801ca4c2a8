import base from './tooling/eslint/base.mjs';

export default base;
