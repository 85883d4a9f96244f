# Sourced by the install scripts: `apt_install TAG PACKAGE…` installs Debian/Ubuntu packages with apt-get (through
# sudo when not root), saying so on stderr with TAG, or explains what to do by hand where apt-get is missing.
apt_install() {
    local tag="$1"
    shift
    echo "$tag: installing $*" >&2
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$tag: apt-get not found; install these (or their equivalents) by hand: $*" >&2
        return 1
    fi
    local sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo_cmd=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -q
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "$@"
}
