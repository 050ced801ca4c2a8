// Just enough T-SQL lexing for the statements the fake answers: delimited identifiers ([a]]b] is "a]b"), Unicode
// string literals (N'it''s' is "it's"), keywords and punctuation. The fake parses names back the way SQL Server
// does, so a quoting mistake in the adapter shows up as a wrong or unknown database name.

export type Lexeme = { kind: 'name' | 'string' | 'word' | 'punct'; text: string };

export function lex(sql: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === '[') {
      let text = '';
      for (i++; ; i++) {
        if (i >= sql.length) throw new SyntaxError('unterminated [identifier]');
        if (sql[i] === ']') {
          if (sql[i + 1] === ']') {
            text += ']';
            i++;
          } else break;
        } else text += sql[i];
      }
      i++;
      out.push({ kind: 'name', text });
    } else if ((char === 'N' || char === 'n') && sql[i + 1] === "'") {
      let text = '';
      for (i += 2; ; i++) {
        if (i >= sql.length) throw new SyntaxError("unterminated N'string'");
        if (sql[i] === "'") {
          if (sql[i + 1] === "'") {
            text += "'";
            i++;
          } else break;
        } else text += sql[i];
      }
      i++;
      out.push({ kind: 'string', text });
    } else if (/[A-Za-z_@#]/.test(char)) {
      const match = /^[A-Za-z_@#][A-Za-z0-9_@#$]*/.exec(sql.slice(i))![0];
      out.push({ kind: 'word', text: match.toUpperCase() });
      i += match.length;
    } else {
      out.push({ kind: 'punct', text: char });
      i++;
    }
  }
  return out;
}

/** Walks the lexemes of one statement; `expect*` throw a SyntaxError naming what was wanted. */
export class Cursor {
  private position = 0;
  constructor(private readonly lexemes: Lexeme[]) {}

  peek(): Lexeme | undefined {
    return this.lexemes[this.position];
  }

  atEnd(): boolean {
    const next = this.peek();
    return next === undefined || (next.kind === 'punct' && next.text === ';' && this.position === this.lexemes.length - 1);
  }

  take(kind: Lexeme['kind'], text?: string): Lexeme | undefined {
    const next = this.peek();
    if (next && next.kind === kind && (text === undefined || next.text === text)) {
      this.position++;
      return next;
    }
    return undefined;
  }

  expect(kind: Lexeme['kind'], text?: string): string {
    const found = this.take(kind, text);
    if (!found) throw new SyntaxError(`Incorrect syntax near '${this.peek()?.text ?? 'end of batch'}' (expected ${text ?? kind})`);
    return found.text;
  }

  /** Words in order, e.g. `expectWords('TO', 'DISK')`. */
  expectWords(...words: string[]): void {
    for (const word of words) this.expect('word', word);
  }
}
