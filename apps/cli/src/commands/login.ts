import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { HoldfastClient, signIn } from '@holdfast/client';
import { configPath, deleteLogin, writeLogin, type StoredLogin } from '../remote/config-store.js';
import { normaliseUrl } from '../remote/connection.js';
import { UsageError } from '../remote/exit-codes.js';
import { printJson } from '../remote/render.js';
import type { CliOutput } from '../output.js';

interface LoginOptions {
  apiKey?: string;
  email?: string;
  password?: string;
  json?: boolean;
}

/** The password from --password, HOLDFAST_PASSWORD, or one line of stdin (so it stays out of shell history). */
async function readPassword(options: LoginOptions): Promise<string> {
  if (options.password) return options.password;
  if (process.env.HOLDFAST_PASSWORD) return process.env.HOLDFAST_PASSWORD;
  const lines = createInterface({ input: process.stdin, output: process.stdin.isTTY ? process.stderr : undefined, terminal: false });
  try {
    const answer = await lines.question(process.stdin.isTTY ? 'Password: ' : '');
    if (!answer) throw new UsageError('no password given (use --password, HOLDFAST_PASSWORD or type it on stdin)');
    return answer;
  } finally {
    lines.close();
  }
}

/** `holdfast login <url>` and `holdfast logout`: where the remote commands go, stored 0600 in the user's config. */
export function addLoginCommands(program: Command, output: CliOutput): void {
  program
    .command('login')
    .description('check and store a server URL with an API key, or sign in with email and password')
    .argument('<url>', 'the server address, e.g. https://backups.example.com')
    .option('--api-key <key>', 'an API key (svc_key_...); default: HOLDFAST_API_KEY')
    .option('--email <email>', 'sign in as this user instead of using an API key')
    .option('--password <password>', 'password for --email (default: HOLDFAST_PASSWORD, else read from stdin)')
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      [
        '',
        'The login is stored in $HOLDFAST_CONFIG, else $XDG_CONFIG_HOME/holdfast/config.json, else',
        '~/.config/holdfast/config.json (mode 0600). HOLDFAST_URL and HOLDFAST_API_KEY override it.',
        '',
        'Examples:',
        '  $ holdfast login https://backups.example.com --api-key svc_key_...',
        '  $ holdfast login http://localhost:3000 --email admin@example.com   # asks for the password',
        '',
      ].join('\n'),
    )
    .action(async (rawUrl: string, _options: LoginOptions, command: Command) => {
      // --api-key is also a global option; whichever position it was given in, it lands in the merged options.
      const options = command.optsWithGlobals<LoginOptions>();
      const url = normaliseUrl(rawUrl);
      let login: StoredLogin;
      let client: HoldfastClient;
      if (options.email) {
        client = await signIn(url, { email: options.email, password: await readPassword(options) });
        const session = client.options.session!;
        login = { url, session: { cookie: session.cookie ?? '', csrfToken: session.csrfToken, email: options.email } };
      } else {
        const apiKey = options.apiKey ?? process.env.HOLDFAST_API_KEY;
        if (!apiKey) throw new UsageError('give --api-key <key> (or HOLDFAST_API_KEY), or --email to sign in with a password');
        client = new HoldfastClient({ baseUrl: url, apiKey });
        login = { url, apiKey };
      }
      // Checked before it is stored: a typo in the URL or the key fails here, not in the next command.
      const who = await client.unwrap(client.api.GET('/api/auth/session'));
      const path = await writeLogin(login);
      if (options.json) return printJson(output, { url, user: who.user.email, authMethod: who.authMethod, permissions: who.permissions, config: path });
      output.write(`Logged in to ${url} as ${who.user.email} (${who.authMethod === 'apikey' ? 'API key' : 'session'}); saved in ${path}\n`);
    });

  program
    .command('logout')
    .description('forget the stored login')
    .option('--json', 'print JSON instead of text')
    .action(async (options: { json?: boolean }) => {
      const removed = await deleteLogin();
      if (options.json) return printJson(output, { removed, config: configPath() });
      output.write(removed ? `Removed ${configPath()}\n` : 'Not logged in\n');
    });
}
