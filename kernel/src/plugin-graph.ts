import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { HoldfastPlugin, PluginRequirement } from './plugin.js';

/** Why a set of plugins cannot be composed: a missing token, a token provided twice, or a dependency cycle. */
export class PluginGraphError extends Error {
  override readonly name = 'PluginGraphError';
}

/** A readable name for a token: the description of a `Symbol.for` token, a class name, or the string itself. */
export function tokenName(token: InjectionToken<unknown>): string {
  if (typeof token === 'symbol') return token.description ?? token.toString();
  if (typeof token === 'function') return token.name || 'anonymous class';
  return String(token);
}

function requirementOf(requirement: PluginRequirement): { token: InjectionToken<unknown>; optional: boolean } {
  return typeof requirement === 'object' && requirement !== null && 'optional' in requirement
    ? { token: requirement.token, optional: true }
    : { token: requirement as InjectionToken<unknown>, optional: false };
}

/**
 * Orders plugins so that every plugin comes after the providers of its required tokens, keeping the given order
 * wherever the graph leaves a choice. `isPreRegistered` answers for tokens the composition registered before any
 * plugin (logger, adapter registry, database...). Throws {@link PluginGraphError} naming the plugin and the token
 * that is missing or provided twice (by two plugins, or by a plugin and the composition), or the plugins of a cycle.
 */
export function orderPlugins(
  plugins: readonly HoldfastPlugin[],
  isPreRegistered: (token: InjectionToken<unknown>) => boolean,
): HoldfastPlugin[] {
  const providerOf = new Map<InjectionToken<unknown>, HoldfastPlugin>();
  const names = new Set<string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) throw new PluginGraphError(`Plugin "${plugin.name}" is listed twice`);
    names.add(plugin.name);
    for (const token of plugin.provides ?? []) {
      const other = providerOf.get(token);
      if (other) throw new PluginGraphError(`Token ${tokenName(token)} is provided by both plugin "${other.name}" and plugin "${plugin.name}"`);
      // The plugin's registration would silently replace the caller's (a stand-in or a second copy): refuse both.
      if (isPreRegistered(token)) {
        throw new PluginGraphError(
          `Token ${tokenName(token)} is provided by plugin "${plugin.name}" and was also registered by the composition before any plugin; ` +
            'leave the plugin out or stop registering the token',
        );
      }
      providerOf.set(token, plugin);
    }
  }

  const dependencies = new Map<HoldfastPlugin, HoldfastPlugin[]>();
  for (const plugin of plugins) {
    const before: HoldfastPlugin[] = [];
    for (const requirement of plugin.requires ?? []) {
      const { token, optional } = requirementOf(requirement);
      if (optional) continue;
      const provider = providerOf.get(token);
      if (provider && provider !== plugin) before.push(provider);
      else if (!provider && !isPreRegistered(token)) {
        throw new PluginGraphError(
          `Plugin "${plugin.name}" requires token ${tokenName(token)}, which no plugin provides and the composition did not register; ` +
            'add the plugin that provides it or register it before composing',
        );
      }
    }
    dependencies.set(plugin, before);
  }

  const ordered: HoldfastPlugin[] = [];
  const state = new Map<HoldfastPlugin, 'visiting' | 'done'>();
  const visit = (plugin: HoldfastPlugin, path: HoldfastPlugin[]): void => {
    const seen = state.get(plugin);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(plugin)), plugin].map((p) => `"${p.name}"`).join(' -> ');
      throw new PluginGraphError(`Plugins depend on each other in a cycle: ${cycle}; mark one of the tokens optional`);
    }
    state.set(plugin, 'visiting');
    for (const dependency of dependencies.get(plugin) ?? []) visit(dependency, [...path, plugin]);
    state.set(plugin, 'done');
    ordered.push(plugin);
  };
  for (const plugin of plugins) visit(plugin, []);
  return ordered;
}

/** Marks a requirement optional: used when present, never ordering plugins (see {@link PluginRequirement}). */
export function optionalToken<T>(token: InjectionToken<T>): { token: InjectionToken<unknown>; optional: true } {
  return { token: token as InjectionToken<unknown>, optional: true };
}

/** Resolves an {@link optionalToken} requirement at use time: the service when some plugin registered it, else undefined. */
export function resolveOptional<T>(container: DependencyContainer, token: InjectionToken<T>): T | undefined {
  return container.isRegistered(token, true) ? container.resolve(token) : undefined;
}
