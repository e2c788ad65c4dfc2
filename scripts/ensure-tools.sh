#!/usr/bin/env bash
# Makes sure the real tools the tests use are installed (Debian packages): Prometheus and its
# peers, the image builders, and the TLS helpers.
# Installs them when missing and running as root with apt-get; otherwise says how.
set -euo pipefail
need=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-pushgateway >/dev/null 2>&1 || need+=(prometheus-pushgateway)
command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
# The image test builds and runs the OCI image (test/image).
command -v buildah >/dev/null 2>&1 || need+=(buildah)
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
# The web-config tests make certificates and bcrypt hashes, and speak TLS with curl.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v htpasswd >/dev/null 2>&1 || need+=(apache2-utils)
command -v curl >/dev/null 2>&1 || need+=(curl)
# The network tests send through a real proxy (test/net/proxy.e2e.test.ts).
command -v tinyproxy >/dev/null 2>&1 || need+=(tinyproxy)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-tools: installing ${need[*]} (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian may start the services it installs; the tests start their own on free ports.
  for s in prometheus prometheus-pushgateway victoria-metrics tinyproxy; do
    (command -v service >/dev/null && service "$s" stop >/dev/null 2>&1) || true
  done
else
  echo "ensure-tools: the tests need: ${need[*]}; install with: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
