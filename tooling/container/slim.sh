#!/bin/sh
# Removes, from the image's runtime stage, files of installed Debian packages that no Holdfast adapter runs, to stay
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
