#!/usr/bin/env bash
# The Kubernetes manifests' test renders each overlay with `kubectl kustomize` (offline, no
# cluster). Install Debian's kubectl (package kubernetes-client) when none is on the PATH and this
# machine can (root with apt-get); otherwise say what to do. The overlays are written for the
# kustomize that kubectl 1.20 embeds as well as for current ones.
set -euo pipefail
if command -v kubectl >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing kubectl (kubernetes-client) for the Kubernetes manifests' test" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
else
  echo "The Kubernetes manifests' test needs kubectl on the PATH: sudo apt-get install kubernetes-client" >&2
  exit 1
fi
