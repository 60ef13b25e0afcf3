#!/bin/sh
# Installs the wats binary for this machine from a wats release:
#   1. picks the build for this OS and CPU (Linux, macOS; x86_64, arm64),
#   2. downloads it, the release's SHA256SUMS and its signature, over https only
#      (redirects included),
#   3. checks SHA256SUMS's signature with ssh-keygen against the release key below
#      (refuses a bad or missing signature; says so when ssh-keygen cannot check),
#   4. checks the binary's SHA-256 against SHA256SUMS (refuses on mismatch),
#   5. moves it to ~/.local/bin/wats (or $WATS_INSTALL_DIR/wats),
#   6. prints the next command.
# It never runs what it downloads, and on any failure it leaves nothing behind.
#
# Settings (environment):
#   WATS_INSTALL_DIR   where `wats` goes (default: ~/.local/bin)
#   WATS_VERSION       a release tag such as v0.1.0 (default: the latest release)
#   WATS_REPO          owner/name of the GitHub repository the release is in
#   WATS_DOWNLOAD_URL  the folder holding the release files (overrides the two above)
#   WATS_TARGET        the build to fetch, e.g. aarch64-apple-darwin (default: detected)
#   WATS_SIGNING_KEY   the release key to check against (default: the one below)
#   WATS_ALLOW_HTTP=1  allow plain http:// (for tests against a local server only)
set -eu

# The release workflow writes its repository here in the copy it publishes.
WATS_REPO_DEFAULT=""
# The public half of the key the release workflow signs SHA256SUMS with (an SSH
# ed25519 key; docs/decisions/supply_chain.md). It lives here, in the repository,
# not in the release: whoever can replace a release's files cannot sign them.
WATS_SIGNING_KEY_DEFAULT=""
# The namespace the release signature is made in (ssh-keygen -Y sign -n).
SIGNATURE_NAMESPACE="wats-release"

say() { printf '%s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
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

# The protocols curl may use, for the first request and for every redirect.
protocols='=https'
if [ "${WATS_ALLOW_HTTP:-}" = 1 ]; then protocols='=https,http'; fi

# download URL FILE: curl only, since wget cannot keep a redirect on https.
download() {
  curl --fail --silent --show-error --location --tlsv1.2 \
    --proto "$protocols" --proto-redir "$protocols" --output "$2" "$1"
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

# Checks $tmp/SHA256SUMS against its signature and the release key. A bad or
# missing signature stops the install; no key, or no ssh-keygen that can check
# (OpenSSH 8.1 or later), is said, and the checksum alone is checked.
check_signature() {
  if [ -z "$signing_key" ]; then
    warn "this install.sh carries no release key: SHA256SUMS is not checked for tampering, only the download against it"
    return 0
  fi
  download "$base/SHA256SUMS.sig" "$tmp/SHA256SUMS.sig" ||
    fail "could not download $base/SHA256SUMS.sig: a signed release has it; nothing was installed"
  if ! command -v ssh-keygen >/dev/null 2>&1; then
    warn "ssh-keygen is not installed: the release signature was not checked, only the download against SHA256SUMS"
    return 0
  fi
  # An ssh-keygen without -Y verify answers with its usage; asked about nothing
  # downloaded, so no download can make it look unable.
  if ssh-keygen -Y verify -f /dev/null -I x -n x -s /dev/null </dev/null 2>&1 | grep -q 'usage:'; then
    warn "this ssh-keygen cannot check signatures (OpenSSH 8.1 or later can): the release signature was not checked, only the download against SHA256SUMS"
    return 0
  fi
  printf '%s namespaces="%s" %s\n' "$SIGNATURE_NAMESPACE" "$SIGNATURE_NAMESPACE" "$signing_key" >"$tmp/allowed_signers"
  if ssh-keygen -Y verify -f "$tmp/allowed_signers" -I "$SIGNATURE_NAMESPACE" \
    -n "$SIGNATURE_NAMESPACE" -s "$tmp/SHA256SUMS.sig" <"$tmp/SHA256SUMS" >/dev/null 2>&1; then
    say "Release signature verified: SHA256SUMS was signed with the wats release key"
    return 0
  fi
  fail "the release signature does not match the wats release key: SHA256SUMS may have been tampered with; nothing was installed"
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
case "$base" in
  https://*) ;;
  http://*)
    if [ "$protocols" != '=https,http' ]; then
      fail "refusing plain http ($base): anyone on the way could change what you download; use an https:// WATS_DOWNLOAD_URL"
    fi
    ;;
  *) fail "WATS_DOWNLOAD_URL must start with https:// (it is $base)" ;;
esac
command -v curl >/dev/null 2>&1 ||
  fail "curl is not installed: install it (wats downloads over https only, which wget cannot promise for redirects), then run this again"
signing_key=${WATS_SIGNING_KEY:-$WATS_SIGNING_KEY_DEFAULT}

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
check_signature
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
