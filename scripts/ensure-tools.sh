#!/usr/bin/env bash
# Makes sure the real tools the tests use are there.
# - Debian packages: Prometheus 2 and its peers, the image builders, the TLS helpers. Installed
#   when missing and running as root with apt-get; otherwise it says how.
# - Built from their Go modules when Go is on PATH: Prometheus 3 (prometheus, promtool) and an
#   OpenTelemetry Collector (OTLP receiver, Prometheus remote-write exporter, debug exporter).
#   Kept by version in a cache outside the checkout and built again only when a version changes.
#
#   scripts/ensure-tools.sh           installs and builds what is missing
#   scripts/ensure-tools.sh --where   prints name=path of each built tool, building nothing
#
# The cache: $POSTURE_TOOLS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/posture-exporter/tools.
set -euo pipefail

# Prometheus 3 is tagged v0.3xx.y in its Go module (v0.316.0 is Prometheus 3.16.0).
PROMETHEUS_MODULE=github.com/prometheus/prometheus
PROMETHEUS_VERSION=v0.316.0
# Built without the optional service discoveries (the tests use static targets only): the AWS,
# Azure, Google Cloud, Kubernetes… clients are 80 of the 135 MB of Go source the two binaries
# compile otherwise. promtool imports the Kubernetes discovery itself, so it keeps that one.
PROMETHEUS_TAGS=remove_all_sd
# One Collector release: the core components and the builder at OTELCOL_CORE_VERSION (stable
# modules at OTELCOL_STABLE_VERSION), contrib's exporter at OTELCOL_CONTRIB_VERSION.
OTELCOL_CORE_VERSION=v0.165.0
OTELCOL_STABLE_VERSION=v1.71.0
OTELCOL_CONTRIB_VERSION=v0.165.1

tools_root="${POSTURE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/posture-exporter/tools}"

otelcol_manifest() {
  cat <<EOF
dist:
  name: otelcol-posture
  description: OpenTelemetry Collector for the posture-exporter tests
  version: $OTELCOL_CONTRIB_VERSION
  output_path: $1
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver $OTELCOL_CORE_VERSION
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter $OTELCOL_CORE_VERSION
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter $OTELCOL_CONTRIB_VERSION
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider $OTELCOL_STABLE_VERSION
  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider $OTELCOL_STABLE_VERSION
EOF
}

# Each build's directory is named by what it was built from: a new version (or manifest) is a new
# directory, and an old one is left for a checkout that still names it.
prometheus_dir="$tools_root/prometheus-$PROMETHEUS_VERSION-$PROMETHEUS_TAGS"
otelcol_dir="$tools_root/otelcol-$OTELCOL_CONTRIB_VERSION-$(otelcol_manifest OUT | sha256sum | cut -c1-12)"

if [ "${1:-}" = --where ]; then
  echo "prometheus3=$prometheus_dir/prometheus"
  echo "promtool3=$prometheus_dir/promtool"
  echo "otelcol=$otelcol_dir/otelcol"
  exit 0
fi
[ $# -eq 0 ] || { echo "ensure-tools: unknown argument $1 (use no argument, or --where)" >&2; exit 2; }

debian_packages() {
  local need=()
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
  [ ${#need[@]} -eq 0 ] && return 0
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
}

# Prometheus 3 from its module's own directory: `go install` refuses a module whose go.mod has
# replace and exclude directives, and the go.work it ships names folders its zip leaves out
# (GOWORK=off). No `builtinassets` tag: the API and the receivers work; the web UI is not built.
build_prometheus() {
  local dir version ldflags
  dir=$(go mod download -json "$PROMETHEUS_MODULE@$PROMETHEUS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/VERSION" ] || { echo "ensure-tools: go mod download of $PROMETHEUS_MODULE@$PROMETHEUS_VERSION gave no module directory" >&2; return 1; }
  version=$(cat "$dir/VERSION")
  ldflags="-X github.com/prometheus/common/version.Version=$version -X github.com/prometheus/common/version.Revision=$PROMETHEUS_VERSION -X github.com/prometheus/common/version.Branch=module"
  # Both in one build, which compiles what they share once (-o a directory: each binary by its name).
  (cd "$dir" && GOWORK=off GOFLAGS=-buildvcs=false go build -tags "$PROMETHEUS_TAGS" -ldflags "$ldflags" -o "$1/" ./cmd/prometheus ./cmd/promtool)
  "$1/prometheus" --version >/dev/null && "$1/promtool" --version >/dev/null
}

# The Collector through its builder, which writes a main module, tidies it and builds it.
build_otelcol() {
  GOBIN="$1/bin" go install "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_CORE_VERSION"
  otelcol_manifest "$1/src" >"$1/manifest.yaml"
  (cd "$1" && GOFLAGS=-buildvcs=false "$1/bin/builder" --config "$1/manifest.yaml")
  mv "$1/src/otelcol-posture" "$1/otelcol"
  rm -rf "$1/src" "$1/bin"
  # It must hold the components the tests configure.
  "$1/otelcol" components >"$1/components.yaml"
  grep -q 'prometheusremotewriteexporter '"$OTELCOL_CONTRIB_VERSION" "$1/components.yaml"
}

# Builds into a fresh directory beside the cache entry and renames it into place only when it
# works, so an interrupted or failed build leaves nothing that looks built.
building=
building_name=
cleanup() {
  local status=$?
  if [ -n "$building" ]; then
    rm -rf "$building"
    echo "ensure-tools: building $building_name failed (the output above says why)" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
ensure_built() {
  local name=$1 dest=$2 builder=$3 started
  [ -f "$dest/.built" ] && return 0
  building=$(mktemp -d "$tools_root/.building-$name-XXXXXX")
  building_name=$name
  started=$(date +%s)
  echo "ensure-tools: building $name into $dest (the first build takes minutes)" >&2
  "$builder" "$building"
  echo "$(($(date +%s) - started)) s" >"$building/.built"
  chmod 755 "$building"
  rm -rf "$dest"
  mv -T "$building" "$dest"
  building=
  echo "ensure-tools: built $name in $(cat "$dest/.built")" >&2
}

go_tools() {
  if ! command -v go >/dev/null 2>&1; then
    echo "ensure-tools: Go is not on PATH, so Prometheus 3 and the OpenTelemetry Collector are not built and the tests that use them will fail; install Go 1.26 or later (https://go.dev/dl/) and run scripts/ensure-tools.sh" >&2
    return 0
  fi
  mkdir -p "$tools_root"
  # One build at a time per cache (two checkouts, or a test run beside CI, share it).
  exec 9>"$tools_root/.lock"
  flock 9
  ensure_built prometheus "$prometheus_dir" build_prometheus
  ensure_built otelcol "$otelcol_dir" build_otelcol
  exec 9>&-
}

debian_packages
go_tools
