#!/usr/bin/env bash
# Provide a Julia >= 1.5 for devplace without touching the system.
#
# Prints the path of a julia executable on stdout.  A `julia` already on PATH (>= 1.5) is used as
# is.  Otherwise, on Debian, Julia 1.5.3 from bullseye's packages is unpacked into
# .julia-runtime/ with a private apt configuration (its own sources list, lists and cache), and a
# wrapper puts bullseye's libunwind first (bookworm's 1.6 makes that Julia segfault on throw).
# See docs/design.md, "Facts that shape the design".
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
runtime="$root/.julia-runtime"
wrapper="$runtime/julia"

julia_ok() {
    "$1" -e 'VERSION >= v"1.5" || exit(1)' >/dev/null 2>&1
}

if command -v julia >/dev/null 2>&1 && julia_ok julia; then
    command -v julia
    exit 0
fi
# The wrapper: bullseye's libunwind first for Julia, and GCC's unwinder preloaded, so that C++
# exceptions thrown by libraries loaded into Julia's process (TensorFlow, in process) unwind
# through libgcc_s rather than through Julia's libunwind, which aborts on them.
write_wrapper() {
    local lib="$runtime/root/usr/lib/x86_64-linux-gnu"
    local rootlib="$runtime/root/lib/x86_64-linux-gnu"
    cat > "$wrapper" <<WRAP
#!/bin/sh
# Julia 1.5.3 from Debian bullseye, with bullseye's libunwind found first and GCC's unwinder
# preloaded (made by setup-julia.sh).
export LD_LIBRARY_PATH="$lib:$lib/julia:$rootlib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_PRELOAD="libgcc_s.so.1\${LD_PRELOAD:+ \$LD_PRELOAD}"
exec "$runtime/root/usr/bin/julia" "\$@"
WRAP
    chmod +x "$wrapper"
}

if [ -x "$runtime/root/usr/bin/julia" ] && ! grep -q libgcc_s "$wrapper" 2>/dev/null; then
    write_wrapper  # a runtime unpacked before the wrapper preloaded the unwinder
fi
if [ -x "$wrapper" ] && julia_ok "$wrapper"; then
    echo "$wrapper"
    exit 0
fi

fail() {
    echo "setup-julia: $*" >&2
    echo "setup-julia: install Julia >= 1.5 yourself (https://julialang.org/downloads or juliaup)" \
         "and put \`julia\` on PATH, then run make again." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 \
    || fail "no julia on PATH and this is not a Debian system (no apt-get/dpkg-deb)."

# The archive URI comes from the machine's own apt configuration, never from this repository.
uri=""
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
    [ -n "$uri" ] && break
done
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
        /etc/apt/sources.list)
fi
[ -n "$uri" ] || fail "could not find a Debian archive URI in /etc/apt/sources.list.d/*.sources."

echo "setup-julia: fetching Julia 1.5.3 from Debian bullseye packages into $runtime" >&2
apt_dir="$runtime/apt"
rm -rf "$runtime"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$runtime/root"
cat > "$apt_dir/sources.list" <<SOURCES
deb [trusted=yes] $uri bookworm main
deb [trusted=yes] $uri bullseye main
SOURCES
apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
    -o "Dir::State::status=/var/lib/dpkg/status"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Retries=3"
)
apt-get "${apt_opts[@]}" update -qq >&2 || fail "apt-get update with the private sources list failed."

bullseye=(julia=1.5.3+dfsg-3 julia-common=1.5.3+dfsg-3 libjulia1=1.5.3+dfsg-3 libllvm9
          libgit2-1.1 libmbedtls12 libmbedx509-0 libmbedcrypto3 libopenlibm3 libffi7
          libunwind8=1.3.2-2)
bookworm=(libdsfmt-19937-1 libhttp-parser2.9 libpcre3 libutf8proc2 libpcre2-8-0 libgmp10 libmpfr6
          libcurl3-gnutls libssh2-1 libgfortran5 libquadmath0)
(
    cd "$apt_dir/debs"
    for pkg in "${bullseye[@]}"; do
        name=${pkg%%=*}
        if [[ $pkg == *=* ]]; then spec=$pkg; else spec="$name/bullseye"; fi
        apt-get "${apt_opts[@]}" download -qq "$spec" >&2
    done
    for pkg in "${bookworm[@]}"; do
        apt-get "${apt_opts[@]}" download -qq "$pkg/bookworm" >&2
    done
) || fail "downloading the Julia packages failed."
for deb in "$apt_dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$runtime/root"
done
rm -rf "$apt_dir"

write_wrapper
julia_ok "$wrapper" || fail "the unpacked Julia in $runtime does not run."
echo "$wrapper"
