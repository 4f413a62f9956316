# shellcheck shell=bash
# Bootstrap step `hls-types`, sourced by bootstrap.sh: AMD's HLS arbitrary-precision headers
# (Apache-2.0) from the one wheel pinned in tools/bootstrap/hls-types/requirements.txt
# (version and sha256), unpacked read-only as headers into .venv/hls-types:
#
#   .venv/hls-types/include/     the wheel's directory named in unpack.txt (ap_int.h, ...)
#   .venv/hls-types/LICENSE      the wheel's licence file (*.dist-info/licenses/LICENSE)
#   .venv/hls-types/.forge-stamp line 1: the spec's hash (forge_spec_hash); then the wheel's
#                                file name and sha256, then `sha256  path` of every header.
#                                toolchains//:fpga probes it, so the identity of the headers
#                                is an input of every HLS C-simulation compile.
#
# Nothing of the wheel is installed or run. Redone only when a file of the spec changed; the
# new tree is built beside the old one and renamed into place, so a failed or interrupted
# download leaves the previous tree (or none) and no partial one.

forge_bootstrap_hls_types() {
    local root=$1 python=${FORGE_PYTHON:-python3}
    local spec="$root/tools/bootstrap/hls-types" dest="$root/.venv/hls-types"
    [ -f "$spec/requirements.txt" ] || return 0
    local hash tree
    hash=$(forge_spec_hash "$spec") || { forge_fail hls-types "cannot hash tools/bootstrap/hls-types"; return 3; }
    if [ -f "$dest/.forge-stamp" ] && [ "$(head -n1 "$dest/.forge-stamp")" = "$hash" ]; then
        return 0
    fi
    tree=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$spec/unpack.txt" | head -n1 | xargs)
    [ -n "$tree" ] || { forge_fail hls-types "tools/bootstrap/hls-types/unpack.txt names no directory of the wheel"; return 3; }

    forge_say "fetching AMD's HLS arbitrary-precision headers (tools/bootstrap/hls-types) into .venv/hls-types"
    mkdir -p "$root/.venv"
    local tmp
    tmp=$(mktemp -d "$root/.venv/.hls-types.XXXXXX") || { forge_fail hls-types "cannot create a temporary directory in .venv"; return 3; }
    local status=0
    # pip from a throwaway venv: Debian's python3 has no pip module, python3-venv brings one.
    # --require-hashes: pip refuses a wheel whose sha256 differs from the pin.
    "$python" -m venv "$tmp/pip" >&2 || status=$?
    [ "$status" -ne 0 ] ||
        "$tmp/pip/bin/python" -m pip download --disable-pip-version-check --no-input --quiet --no-deps \
            --only-binary=:all: --require-hashes -r "$spec/requirements.txt" -d "$tmp/wheel" >&2 || status=$?
    if [ "$status" -ne 0 ]; then
        rm -rf "$tmp"
        forge_fail hls-types "\`pip download -r tools/bootstrap/hls-types/requirements.txt\` (in a venv of $python) exited $status (nothing changed in .venv/hls-types)"
        return 3
    fi
    "$python" - "$tmp/wheel" "$tree" "$tmp/out" <<'EOF' >&2 || status=$?
import pathlib, sys, zipfile

wheel_dir, tree, out = pathlib.Path(sys.argv[1]), sys.argv[2].strip("/") + "/", pathlib.Path(sys.argv[3])
wheels = sorted(wheel_dir.glob("*.whl"))
if len(wheels) != 1:
    sys.exit(f"expected one wheel in the download, found {[w.name for w in wheels]}")
with zipfile.ZipFile(wheels[0]) as z:
    names = z.namelist()
    headers = [n for n in names if n.startswith(tree) and not n.endswith("/")]
    licences = [n for n in names if n.split("/")[0].endswith(".dist-info") and n.endswith("/licenses/LICENSE")]
    if not headers:
        sys.exit(f"{wheels[0].name} has no files under {tree} (tools/bootstrap/hls-types/unpack.txt)")
    if len(licences) != 1:
        sys.exit(f"{wheels[0].name}: expected one *.dist-info/licenses/LICENSE, found {licences}")
    for name, target in [(n, out / "include" / n[len(tree):]) for n in headers] + [(licences[0], out / "LICENSE")]:
        if ".." in pathlib.PurePosixPath(name).parts:
            sys.exit(f"{wheels[0].name}: refusing the path {name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(name))
        target.chmod(0o444)
EOF
    if [ "$status" -ne 0 ]; then
        rm -rf "$tmp"
        forge_fail hls-types "unpacking the wheel exited $status (nothing changed in .venv/hls-types)"
        return 3
    fi
    local wheel
    wheel=$(cd "$tmp/wheel" && ls ./*.whl)
    {
        printf '%s\n' "$hash"
        (cd "$tmp/wheel" && sha256sum "${wheel#./}")
        (cd "$tmp/out" && find include -type f | LC_ALL=C sort | xargs sha256sum)
    } >"$tmp/out/.forge-stamp" || status=$?
    [ "$status" -eq 0 ] || { rm -rf "$tmp"; forge_fail hls-types "cannot write the stamp"; return 3; }
    # Swap the finished tree in: the old one is moved aside first and removed after.
    if [ -e "$dest" ]; then
        mv "$dest" "$tmp/old" || { rm -rf "$tmp"; forge_fail hls-types "cannot move the old .venv/hls-types aside"; return 3; }
    fi
    mv "$tmp/out" "$dest" || { forge_fail hls-types "cannot move the new tree to .venv/hls-types"; return 3; }
    chmod -R u+w "$tmp" 2>/dev/null
    rm -rf "$tmp"
}
