#!/bin/sh
# Removes, from the image's system stage, files of installed Debian packages that no Holdfast adapter runs, to stay
# within the image size budget (docs/operations/container.md). Files are removed, packages are not: dpkg still
# lists them, so a derived image's `apt-get install` works; one that needs full Perl reinstalls it
# (`apt-get install --reinstall perl-modules-5.40 libperl5.40`).
set -eu
# Client programs no adapter calls: MariaDB's admin tools (the MySQL source runs mariadb-dump, mariadb-binlog,
# mariadb and mariadb-backup/mbstream), Redis's file checkers (redis-cli stays), Samba's tools other than smbclient;
# and the links (mysql*) left pointing at them.
for tool in mariadb-slap mariadb-import mariadb-show mariadb-tzinfo-to-sql mariadb-plugin mariadb-conv perror \
            mariadb-admin mariadb-waitpid mariadb-find-rows mariadb-setpermission mariadb-access mariadb-dumpslow \
            mariadb-hotcopy mariadb-report mariadb-convert-table-format mytop aria_chk aria_dump_log aria_ftdump \
            aria_pack aria_read_log myisam_ftdump myisamchk myisamlog myisampack mariadb-check my_print_defaults \
            replace resolve_stack_dump \
            redis-check-aof redis-check-rdb redis-benchmark \
            rpcclient smbcacls smbcquotas smbget smbspool smbtar smbtree cifsdd dbwrap_tool mdsearch; do
  rm -f "/usr/bin/$tool"
done
find /usr/bin -xtype l -delete
# Perl beyond perl-base: pulled in by postgresql-client-common's wrapper (bypassed, see the Dockerfile) and the
# MariaDB scripts removed above. perl-base stays (debconf and dpkg need it).
rm -rf /usr/lib/*-linux-gnu/perl/5.* /usr/share/perl/5.* /usr/lib/*-linux-gnu/libperl.so.*
# Unused ICU libraries (smbclient loads libicuuc, libicui18n and libicudata only) and Perl's own scripts.
rm -f /usr/lib/*-linux-gnu/libicuio.so.* /usr/lib/*-linux-gnu/libicutest.so.* /usr/lib/*-linux-gnu/libicutu.so.* \
      /usr/bin/perlbug /usr/bin/perlthanks /usr/bin/perlivp /usr/bin/perldoc
# glibc's character set converters (8 MB): Node, the database clients and rsync (without --iconv) use none; Samba
# converts UTF-8 itself and needs the DOS code page (CP850) and a few Western ones. The others are removed.
gconv=$(echo /usr/lib/*-linux-gnu/gconv)
find "$gconv" -name '*.so' ! -name 'IBM850.so' ! -name 'IBM437.so' ! -name 'ISO8859-1.so' ! -name 'ISO8859-15.so' \
  ! -name 'CP1252.so' ! -name 'UTF-16.so' ! -name 'UTF-32.so' ! -name 'UTF-7.so' ! -name 'UNICODE.so' -delete
# npm and yarn (the official node images ship both): nothing runs them, and a derived image that needs npm installs
# it. Node's symbol table (18 MB): native addons link against its dynamic symbols, which `strip` keeps.
rm -rf /usr/local/lib/node_modules/npm /usr/local/bin/npm /usr/local/bin/npx /usr/local/include /opt/yarn* \
       /usr/local/bin/yarn /usr/local/bin/yarnpkg /usr/local/share/doc /usr/local/share/man
strip /usr/local/bin/node
# Programs no adapter runs from packages that stay: tini's static twin (tini is PID 1), zstd's parallel front end,
# MariaDB's Perl monitor.
rm -f /usr/bin/tini-static /usr/bin/pzstd /usr/bin/innotop
# Samba's private libraries that smbclient does not load (the other Samba programs are removed above); the image
# test runs smbclient against the test Samba server, so a library it needs cannot go unnoticed.
needed=$(ldd /usr/bin/smbclient | awk '$3 ~ /\/samba\// {print $3}' | xargs -r readlink -f)
for lib in /usr/lib/*-linux-gnu/samba/*.so*; do
  case " $(echo $needed) " in *" $(readlink -f "$lib") "*) ;; *) rm -f "$lib" ;; esac
done
ldd /usr/bin/smbclient | grep -q 'not found' && { echo 'slim.sh: smbclient lost a library' >&2; exit 1; }
true
