import type { Command } from 'commander';
import { UsageError } from '../remote/exit-codes.js';
import type { CliOutput } from '../output.js';

interface Node {
  path: string[];
  words: string[];
}

/** Every command path with the words that may follow it (subcommands and options). */
function walk(command: Command, path: string[] = []): Node[] {
  const words = [...command.commands.map((sub) => sub.name()), ...command.options.map((option) => option.long ?? option.short ?? '').filter(Boolean), '--help'];
  return [{ path, words }, ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()]))];
}

function bash(nodes: Node[]): string {
  const cases = nodes
    .map((node) => `    "${node.path.join(' ')}") words="${node.words.join(' ')}" ;;`)
    .join('\n');
  return `# holdfast bash completion: source <(holdfast completion bash)
_holdfast() {
  local cur path word words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=""
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$word" in -*) ;; *) path="\${path:+$path }$word" ;; esac
  done
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F _holdfast holdfast
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef holdfast
# holdfast zsh completion: source <(holdfast completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(nodes)}`;
}

/** `holdfast completion bash|zsh`: a completion script built from the command tree, so it never goes stale. */
export function addCompletionCommand(program: Command, output: CliOutput): void {
  program
    .command('completion')
    .description('print a shell completion script')
    .argument('<shell>', 'bash or zsh')
    .addHelpText('after', '\nExamples:\n  $ source <(holdfast completion bash)          # in ~/.bashrc\n  $ holdfast completion zsh > "${fpath[1]}/_holdfast"\n')
    .action((shell: string) => {
      const nodes = walk(program);
      if (shell === 'bash') return output.write(bash(nodes));
      if (shell === 'zsh') return output.write(zsh(nodes));
      throw new UsageError(`unknown shell "${shell}": use bash or zsh`);
    });
}
