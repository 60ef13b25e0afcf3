#!/bin/sh
# Installs the wats binary for this machine from a wats release:
#   1. picks the build for this OS and CPU (Linux, macOS; x86_64, arm64),
#   2. downloads it and the release's SHA256SUMS,
#   3. checks the binary's SHA-256 against SHA256SUMS (refuses on mismatch),
#   4. moves it to ~/.local/bin/wats (or $WATS_INSTALL_DIR/wats),
#   5. prints the next command.
# It never runs what it downloads, and on any failure it leaves nothing behind.
#
# Settings (environment):
#   WATS_INSTALL_DIR   where `wats` goes (default: ~/.local/bin)
#   WATS_VERSION       a release tag such as v0.1.0 (default: the latest release)
#   WATS_REPO          owner/name of the GitHub repository the release is in
#   WATS_DOWNLOAD_URL  the folder holding the release files (overrides the two above)
#   WATS_TARGET        the build to fetch, e.g. aarch64-apple-darwin (default: detected)
set -eu

# The release workflow writes its repository here in the copy it publishes.
WATS_REPO_DEFAULT=""

say() { printf '%s\n' "$*"; }
fail() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

detect_target() {
  os=$(uname -s)
  cpu=$(uname -m)
  case "$os" in
    Linux) os_part="unknown-linux-gnu" ;;
    Darwin) os_part="apple-darwin" ;;
    *) fail "no wats build for $os: wats is released for Linux and macOS" ;;
  esac
  case "$cpu" in
    x86_64 | amd64) cpu_part="x86_64" ;;
    aarch64 | arm64) cpu_part="aarch64" ;;
    *) fail "no wats build for the $cpu processor: wats is released for x86_64 and arm64" ;;
  esac
  printf '%s-%s\n' "$cpu_part" "$os_part"
}

# download URL FILE
download() {
  if command -v curl >/dev/null 2>&1; then
    curl --fail --silent --show-error --location --proto '=https,http' --output "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --output-document="$2" "$1"
  else
    fail "neither curl nor wget is installed: install one of them, then run this again"
  fi
}

# sha256_of FILE
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "neither sha256sum nor shasum is installed: cannot check the download"
  fi
}

target=${WATS_TARGET:-$(detect_target)}
asset="wats-$target"
version=${WATS_VERSION:-latest}
repo=${WATS_REPO:-$WATS_REPO_DEFAULT}
if [ -n "${WATS_DOWNLOAD_URL:-}" ]; then
  base=${WATS_DOWNLOAD_URL%/}
elif [ -z "$repo" ]; then
  fail "which repository? set WATS_REPO=owner/name (or use the install.sh attached to a release)"
elif [ "$version" = latest ]; then
  base="https://github.com/$repo/releases/latest/download"
else
  base="https://github.com/$repo/releases/download/$version"
fi
install_dir=${WATS_INSTALL_DIR:-${HOME:?HOME is not set: set WATS_INSTALL_DIR}/.local/bin}

# Refuse before downloading when the binary could not be put in place. The
# folder itself is made only once the download is verified.
nearest=$install_dir
while [ ! -d "$nearest" ]; do
  if [ -e "$nearest" ]; then
    fail "cannot install into $install_dir: $nearest is not a folder; choose another with WATS_INSTALL_DIR=/path/to/bin"
  fi
  nearest=$(dirname "$nearest")
done
if [ ! -w "$nearest" ]; then
  fail "cannot write to $nearest: choose another folder with WATS_INSTALL_DIR=/path/to/bin"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wats-install.XXXXXX") || fail "cannot create a temporary folder"
staged=""
cleanup() {
  rm -rf "$tmp"
  if [ -n "$staged" ]; then rm -f "$staged"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "Downloading $asset from $base"
download "$base/SHA256SUMS" "$tmp/SHA256SUMS" ||
  fail "could not download $base/SHA256SUMS: check WATS_VERSION and your network"
expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/SHA256SUMS")
if [ -z "$expected" ]; then
  fail "this release has no build for $target (SHA256SUMS lists none): see the release page for the builds there are"
fi
download "$base/$asset" "$tmp/$asset" || fail "could not download $base/$asset"

actual=$(sha256_of "$tmp/$asset")
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; nothing was installed"
fi
say "SHA-256 matches SHA256SUMS: $actual"

# Copy next to the target, then rename: the old binary stays whole until the new one is complete.
mkdir -p "$install_dir" || fail "cannot create $install_dir"
staged="$install_dir/.wats.install.$$"
cp "$tmp/$asset" "$staged" || fail "cannot write to $install_dir"
chmod 755 "$staged"
mv -f "$staged" "$install_dir/wats" || fail "cannot write $install_dir/wats"
staged=""
say "Installed $install_dir/wats"

case ":${PATH:-}:" in
  *":$install_dir:"*) ;;
  *) say "$install_dir is not on your PATH; add it: export PATH=\"$install_dir:\$PATH\"" ;;
esac
say "Next: wats setup claude   (or: wats setup codex), then: wats"
