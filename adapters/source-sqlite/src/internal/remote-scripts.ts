/**
 * The POSIX sh scripts SSH mode runs on the remote host (`sh -c <script> sh <args>`). Every value arrives as a
 * positional argument, quoted word by word by the SDK, so a path never becomes shell syntax.
 */

/** Exit codes the scripts use to say what failed. */
export const EXIT = { notSqlite: 65, notIntact: 66, io: 70, noCli: 90, missing: 91, notFile: 92 } as const;

/**
 * `$1` cli, `$2` file (empty: version only), `$3` "1" to also read the schema (check), else only the file's existence
 * (dump: the backup itself waits on locks and fails on a non-database). Prints the version (and the schema count).
 */
export const CHECK_SCRIPT = `
v=$("$1" -version 2>&1) || { printf '%s\\n' "$v" >&2; exit ${EXIT.noCli}; }
printf '%s\\n' "$v"
[ -n "$2" ] || exit 0
[ -e "$2" ] || { echo "database file $2 does not exist" >&2; exit ${EXIT.missing}; }
[ -f "$2" ] || { echo "$2 is not a regular file" >&2; exit ${EXIT.notFile}; }
[ "$3" = 1 ] || exit 0
exec "$1" -batch -bail -readonly "$2" 'SELECT count(*) FROM sqlite_schema;'
`;

/**
 * `$1` cli, `$2` file, `$3` busy timeout (ms), `$4` private staging directory (must not exist). The online backup
 * into the staging directory inside one read transaction (see dump.ts), then the copy streamed to stdout. The copy
 * is unlinked once opened, so only a kill during the backup itself can leave the directory (removed by the adapter).
 */
export const DUMP_SCRIPT = `
set -e
umask 077
mkdir -m 700 "$4"
trap 'rm -rf "$4"' EXIT
"$1" -batch -bail -readonly "$2" ".timeout $3" 'BEGIN;' 'SELECT count(*) FROM sqlite_schema;' ".backup '$4/backup.sqlite'" 'COMMIT;' >/dev/null
exec 3<"$4/backup.sqlite"
rm -rf "$4"
trap - EXIT
exec cat <&3
`;

/**
 * `$1` cli, `$2` target, `$3` temp file beside it, `$4` keep previous (1/0). The same steps as the local
 * restore (restore.ts): stdin to the temp file, magic and PRAGMA integrity_check, current file (and side files) to
 * `<target>.previous`, rename into place, check again, roll back on any failure. Prints `moved=1` when a file was replaced.
 */
export const RESTORE_SCRIPT = `
umask 077
cli=$1; target=$2; temp=$3; keep=$4; previous="$target.previous"; moved=0; placed=0; ok=1
sides() { for s in '' -wal -shm -journal; do "$@" "$s"; done; }
drop() { rm -f "$1$2"; }
move() { if [ -e "$1$3" ]; then mv "$1$3" "$2$3" || ok=0; fi; }
# Only a file this script put in place is ever removed from the target's name.
rollback() { if [ "$placed" = 1 ]; then sides drop "$target"; fi; if [ "$moved" = 1 ]; then sides move "$previous" "$target"; fi; }
fail() { echo "$2" >&2; sides drop "$temp"; exit "$1"; }
"$cli" -version >/dev/null 2>&1 || fail ${EXIT.noCli} "$cli was not found or does not run"
cat > "$temp" || fail ${EXIT.io} "cannot write $temp"
[ "$(head -c 16 "$temp" | tr '\\000' '#')" = 'SQLite format 3#' ] || fail ${EXIT.notSqlite} 'the backup is not an SQLite database file'
if [ -e "$target" ]; then chmod --reference="$target" "$temp" 2>/dev/null; chown --reference="$target" "$temp" 2>/dev/null; fi
r=$("$cli" -batch -bail "$temp" 'PRAGMA integrity_check;' 2>&1)
[ "$r" = ok ] || fail ${EXIT.notIntact} "the restored file failed PRAGMA integrity_check: $(printf '%s' "$r" | head -n 5 | tr '\\n' ';')"
rm -f "$temp-wal" "$temp-shm" "$temp-journal"
if [ -e "$target" ]; then
  sides drop "$previous"
  moved=1
  sides move "$target" "$previous"
  [ "$ok" = 1 ] || { rollback; fail ${EXIT.io} "cannot move $target aside"; }
fi
mv "$temp" "$target" || { rollback; fail ${EXIT.io} "cannot move the restored file to $target"; }
placed=1
r=$("$cli" -batch -bail "$target" 'PRAGMA integrity_check;' 2>&1)
[ "$r" = ok ] || { rollback; fail ${EXIT.notIntact} "$target failed PRAGMA integrity_check after the rename: $r"; }
if [ "$moved" = 1 ] && [ "$keep" != 1 ]; then sides drop "$previous"; fi
echo "moved=$moved"
`;
