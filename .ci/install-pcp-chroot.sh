#!/usr/bin/env bash
# Install a Debian release's PCP into a debootstrap chroot, for differential tests against
# libpcps newer than the host's 6.0.3 (see docs/guide.md): trixie gives 6.3.x, sid 7.x.
#
#   bash .ci/install-pcp-chroot.sh SUITE [DIR]   (default DIR: /opt/pcpconform/SUITE; root)
#
# Idempotent: exits 0 at once when DIR already has pmdumplog and python3 imports pcp.pmi
# and pcp.pmapi in the chroot. debootstrap uses its default mirror (none is passed).
# Debian's maintainer scripts call systemctl; without a running systemd we shadow it with a
# no-op first on PATH (apt runs dpkg with its own DPkg::Path, so it is set there too), and
# policy-rc.d forbids starting services inside the chroot.
set -euo pipefail

SUITE=${1:?usage: install-pcp-chroot.sh SUITE [DIR]}
DIR=${2:-/opt/pcpconform/$SUITE}
export DEBIAN_FRONTEND=noninteractive

ready() {
    # PCP, its Python bindings, and the programs libpcp runs to decompress .bz2/.lzma/.zst
    [ -x "$DIR/usr/bin/pmdumplog" ] && [ -x "$DIR/usr/bin/python3" ] &&
        [ -x "$DIR/usr/bin/bzip2" ] && [ -x "$DIR/usr/bin/xz" ] && [ -x "$DIR/usr/bin/zstd" ] &&
        chroot "$DIR" /usr/bin/python3 -E -s -c 'from pcp import pmi, pmapi' >/dev/null 2>&1
}

version() {
    chroot "$DIR" dpkg-query -W -f='${Version}\n' pcp
}

if ready; then
    echo "$SUITE PCP already in $DIR: $(version)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-pcp-chroot.sh: must run as root (debootstrap, chroot)" >&2
    exit 2
fi

if ! command -v debootstrap >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# a finished debootstrap has an installed base-files; an interrupted one (it leaves
# DIR/debootstrap behind) is started again from scratch; anything else in DIR is left alone
if ! chroot "$DIR" dpkg-query -W -f='${Status}' base-files 2>/dev/null | grep -q 'ok installed'; then
    case "$DIR" in /|'') echo "install-pcp-chroot.sh: refusing DIR=$DIR" >&2; exit 2;; esac
    if [ -d "$DIR/debootstrap" ]; then
        rm -rf "$DIR"
    elif [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
        echo "install-pcp-chroot.sh: $DIR is not empty and holds no debootstrap system" >&2
        exit 2
    fi
    mkdir -p "$DIR"
    debootstrap --variant=minbase "$SUITE" "$DIR"
fi

shim=/tmp/pcpconform-shim
mkdir -p "$DIR$shim"
printf '#!/bin/sh\nexit 0\n' > "$DIR$shim/systemctl"
chmod +x "$DIR$shim/systemctl"
printf '#!/bin/sh\nexit 101\n' > "$DIR/usr/sbin/policy-rc.d"
chmod +x "$DIR/usr/sbin/policy-rc.d"
cleanup() { rm -rf "$DIR$shim"; }
trap cleanup EXIT

CPATH="$shim:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
in_chroot() { chroot "$DIR" /usr/bin/env -i PATH="$CPATH" DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 HOME=/root "$@"; }

apt_opts=(-o DPkg::Path="$CPATH" -o Dpkg::Use-Pty=0)   # no /dev/pts in the chroot
if ! out=$(in_chroot apt-get update -qq 2>&1); then
    echo "$out" >&2
    if grep -qi 'expired' <<<"$out"; then
        apt_opts+=(-o Acquire::Check-Valid-Until=false)
        in_chroot apt-get "${apt_opts[@]}" update -qq
    else
        exit 1
    fi
elif grep -qi 'expired' <<<"$out"; then
    echo "$out" >&2
    apt_opts+=(-o Acquire::Check-Valid-Until=false)
    in_chroot apt-get "${apt_opts[@]}" update -qq
fi

in_chroot apt-get install -y -q --no-install-recommends "${apt_opts[@]}" \
    pcp python3-pcp libpcp-import1 libpcp-mmv1 bzip2 xz-utils zstd
in_chroot dpkg --configure -a

if ! ready; then
    echo "install-pcp-chroot.sh: $SUITE's PCP did not install into $DIR" >&2
    exit 1
fi
in_chroot apt-get clean
echo "$SUITE PCP installed in $DIR: $(version)"
chroot "$DIR" /usr/bin/pmdumplog --version 2>&1 || true
