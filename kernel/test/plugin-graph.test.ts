import { describe, expect, it } from 'vitest';
import { orderPlugins, PluginGraphError, type HoldfastPlugin } from '../src/index.js';

const A = Symbol.for('test:a');
const B = Symbol.for('test:b');
const PRE = Symbol.for('test:pre');
const plugin = (name: string, parts: Partial<HoldfastPlugin> = {}): HoldfastPlugin => ({ name, ...parts });
const names = (plugins: HoldfastPlugin[]) => plugins.map((p) => p.name);

describe('orderPlugins', () => {
  it('puts providers before the plugins that require their tokens and keeps the given order otherwise', () => {
    const consumer = plugin('consumer', { requires: [A] });
    const bystander = plugin('bystander');
    const provider = plugin('provider', { provides: [A] });
    expect(names(orderPlugins([consumer, bystander, provider], () => false))).toEqual(['provider', 'consumer', 'bystander']);
  });

  it('accepts tokens the composition registered beforehand', () => {
    expect(names(orderPlugins([plugin('x', { requires: [PRE] })], (token) => token === PRE))).toEqual(['x']);
  });

  it('refuses a token a plugin provides that the composition also registered beforehand', () => {
    const attempt = () => orderPlugins([plugin('engine', { provides: [PRE] })], (token) => token === PRE);
    expect(attempt).toThrow(PluginGraphError);
    expect(attempt).toThrow(/Token test:pre is provided by plugin "engine" and was also registered by the composition/);
  });

  it('refuses a missing required token, naming the plugin and the token', () => {
    const attempt = () => orderPlugins([plugin('engine', { requires: [A] })], () => false);
    expect(attempt).toThrow(PluginGraphError);
    expect(attempt).toThrow(/Plugin "engine" requires token test:a, which no plugin provides/);
  });

  it('lets an optional token be missing and never orders by it', () => {
    const first = plugin('first', { requires: [{ token: B, optional: true }] });
    const second = plugin('second', { provides: [B] });
    expect(names(orderPlugins([first, second], () => false))).toEqual(['first', 'second']);
    expect(names(orderPlugins([plugin('alone', { requires: [{ token: B, optional: true }] })], () => false))).toEqual(['alone']);
  });

  it('refuses a cycle, naming the plugins in it', () => {
    const one = plugin('one', { provides: [A], requires: [B] });
    const two = plugin('two', { provides: [B], requires: [A] });
    expect(() => orderPlugins([one, two], () => false)).toThrow(/cycle: "one" -> "two" -> "one"/);
  });

  it('refuses a token provided twice and a plugin listed twice', () => {
    expect(() => orderPlugins([plugin('p', { provides: [A] }), plugin('q', { provides: [A] })], () => false)).toThrow(
      /test:a is provided by both plugin "p" and plugin "q"/,
    );
    const same = plugin('same');
    expect(() => orderPlugins([same, same], () => false)).toThrow(/listed twice/);
  });
});
