#!/usr/bin/env bash
# Builds Citus 13.2.2 from the source tarball in ../shared/citus (beside the repository) with this
# project's patches (every *.patch beside this script) and installs it into the Debian PostgreSQL 15.
# What ../shared/citus/install.sh does, plus the patches; CI and `make test-citus` use this one.
# Idempotent: does nothing when this version with exactly these patches is installed (a marker
# beside citus.control holds their digest). Needs root (apt-get and make install).
#
# The patches (each says what it fixes; docs/scaling.md, "Citus as this project builds it"):
#   null-distribution-argument.patch  a delegated function called with a NULL distribution argument
#                                     crashed the node (citusdata/citus#7242); now the call runs locally
#   policy-scalar-sublink.patch       a row policy of a distributed table may hold a scalar subquery
#                                     over no relation, such as (select app.current_organization_id()):
#                                     one text for every policy on one server and on a cluster
#   local-plan-cache.patch            a statement whose distribution value is a parameter (every one
#                                     in a PL/pgSQL function) reuses its cached local plan; it was
#                                     planned again at every execution
#   move-connection.patch             a blocking shard move sends each shard's DDL to the target over
#                                     one connection, not a new one per shard and phase: half of a
#                                     move's time, during which writes to its group wait
set -euo pipefail
export LC_ALL=C  # the patches in byte order, as scripts/citus.ts digests them
here=$(cd "$(dirname "$0")" && pwd)
version=13.2.2
shared=${CITUS_SOURCE_DIR:-$here/../../../shared/citus}
[ -f "$shared/citus-$version.tar.gz" ] || shared=/work/shared/citus
pg_config=/usr/lib/postgresql/15/bin/pg_config
[ -x "$pg_config" ] || { echo "citus install: $pg_config is missing (Debian's postgresql-15)" >&2; exit 1; }
libdir=$($pg_config --pkglibdir)
marker="$($pg_config --sharedir)/extension/citus.svc-patches"
digest=$(cd "$here" && cat ./*.patch | sha256sum | cut -d' ' -f1)
if [ -f "$libdir/citus.so" ] && [ "$(cat "$marker" 2>/dev/null)" = "$version $digest" ]; then
  echo "citus $version (patched: $digest) already installed"; exit 0
fi
[ "$(id -u)" = 0 ] || { echo "citus install: run as root (apt-get, make install)" >&2; exit 1; }
need=()
for p in postgresql-server-dev-15 liblz4-dev libzstd-dev libkrb5-dev autoconf flex bison build-essential libssl-dev libicu-dev libreadline-dev libxslt1-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  # Not libpam0g-dev or libcurl4-openssl-dev: their upgrades restart the PostgreSQL service; Citus builds without them.
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
src=$(mktemp -d); trap 'rm -rf "$src"' EXIT
tar -xzf "$shared/citus-$version.tar.gz" -C "$src"
cd "$src/citus-$version"
# PostgreSQL 15.20 declares have_createdb_privilege() itself; Citus 13.2.2 defines a static copy for PG 15.
patch -s -p0 src/include/pg_version_compat.h < "$shared/pg15.20-have_createdb_privilege.patch"
for p in "$here"/*.patch; do patch -s -p0 < "$p"; done
./configure -q PG_CONFIG=$pg_config --without-libcurl >/dev/null
make -s -j"$(nproc)" >/dev/null 2>&1
make -s install >/dev/null
echo "$version $digest" > "$marker"
echo "citus $version installed with $(ls "$here"/*.patch | wc -l) patch(es) of this project"
