import { describe, expect, it } from 'vitest';
import { quoteName, quoteString } from '../src/index.js';
import { planMoves } from '../src/internal/restore.js';
import { backupStatement, restoreStatement } from '../src/internal/statements.js';
import { lex } from './fake-tds/tsql.js';

describe('T-SQL quoting', () => {
  it('brackets names and doubles a closing bracket', () => {
    expect(quoteName('shop-eu')).toBe('[shop-eu]');
    expect(quoteName('shop.eu')).toBe('[shop.eu]');
    expect(quoteName('shop eu')).toBe('[shop eu]');
    expect(quoteName('a]b')).toBe('[a]]b]');
    expect(quoteName(']]')).toBe('[]]]]]');
    expect(quoteName('[x')).toBe('[[x]');
    expect(quoteName("o'brien; DROP DATABASE x--")).toBe("[o'brien; DROP DATABASE x--]");
  });

  it('refuses names SQL Server cannot hold', () => {
    expect(() => quoteName('')).toThrow(RangeError);
    expect(() => quoteName('x'.repeat(129))).toThrow(RangeError);
    expect(() => quoteName('a\0b')).toThrow(RangeError);
  });

  it('writes Unicode literals with doubled quotes', () => {
    expect(quoteString("it's")).toBe("N'it''s'");
    expect(quoteString('C:\\Backups\\a]b.bak')).toBe("N'C:\\Backups\\a]b.bak'");
    expect(quoteString('東京')).toBe("N'東京'");
  });

  it('round-trips through a lexer that reads names and literals as SQL Server does', () => {
    for (const name of ['a]b', ']', 'x y.z-w', "q'uote", '[]', 'naïve 東京']) {
      const lexemes = lex(backupStatement(name, `/tmp/${name}.bak`, { copyOnly: true, compression: false }));
      expect(lexemes[2]).toEqual({ kind: 'name', text: name });
      expect(lexemes.find((lexeme) => lexeme.kind === 'string')).toEqual({ kind: 'string', text: `/tmp/${name}.bak` });
    }
  });
});

describe('restore file moves', () => {
  it('names moved files after the target, keeps extensions, and never lets two files collide', () => {
    const moves = planMoves(
      'shop copy]1',
      [
        { LogicalName: 'shop', PhysicalName: 'C:\\Data\\shop.mdf', Type: 'D' },
        { LogicalName: 'shop 2', PhysicalName: 'C:\\Data\\shop2', Type: 'D' },
        { LogicalName: 'shop_2', PhysicalName: 'C:\\Data\\shop2b.ndf', Type: 'D' },
        { LogicalName: 'shop_log', PhysicalName: '/var/opt/mssql/data/shop_log.ldf', Type: 'L' },
      ],
      'E:\\Data',
      '/var/opt/mssql/log/',
    );
    expect(moves).toEqual([
      { logicalName: 'shop', physicalName: 'E:\\Data\\shop_copy_1_shop.mdf' },
      { logicalName: 'shop 2', physicalName: 'E:\\Data\\shop_copy_1_shop_2.ndf' },
      { logicalName: 'shop_2', physicalName: 'E:\\Data\\shop_copy_1_shop_2_2.ndf' },
      { logicalName: 'shop_log', physicalName: '/var/opt/mssql/log/shop_copy_1_shop_log.ldf' },
    ]);
    expect(restoreStatement('shop copy]1', "/b/it's.bak", moves.slice(0, 1), true)).toBe(
      "RESTORE DATABASE [shop copy]]1] FROM DISK = N'/b/it''s.bak' WITH MOVE N'shop' TO N'E:\\Data\\shop_copy_1_shop.mdf', REPLACE, RECOVERY;",
    );
  });
});
