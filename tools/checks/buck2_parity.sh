#!/usr/bin/env bash
# Runs upstream buck2 and forge on the same files and prints every difference:
#   1. every conformance workspace under both engines, held to the same expected.json;
#   2. the project: `targets`, `build --show-output` (labels, output paths modulo the isolation
#      dir and configuration hash, output contents modulo the isolation dir) and `test` verdicts.
#
#   tools/checks/buck2_parity.sh BUCK2                     # everything
#   PARITY_PATTERNS='//finn/tiny/... //hw/aurora_flow:lint' tools/checks/buck2_parity.sh BUCK2
#   PARITY_SKIP=conformance|workspace                      # one half only
#
# BUCK2 is the buck2 binary. buck2 runs with `--isolation-dir ${PARITY_ISOLATION_DIR:-parity}`
# (its outputs go to buck-out/<that dir>, forge's to buck-out/forge). Exit status: 0 when both
# engines agree, 1 when they differ, 2 on a usage error. Not part of `./forge test`: the
# machines CI runs on have no buck2.
set -uo pipefail
# Byte-wise text handling: outputs may be binary.
export LC_ALL=C

usage() {
  echo "usage: $0 BUCK2   (BUCK2 = path to an upstream buck2 binary)" >&2
  exit 2
}
[ $# -eq 1 ] || usage
buck2="$1"
[ -x "$buck2" ] || { echo "$buck2 is not an executable" >&2; usage; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
iso="${PARITY_ISOLATION_DIR:-parity}"
patterns="${PARITY_PATTERNS:-//...}"
skip="${PARITY_SKIP:-}"
out="$(mktemp -d "${TMPDIR:-/tmp}/buck2-parity.XXXXXX")"
differences=0

differ() {
  differences=$((differences + 1))
  printf 'DIFFERENCE: %s\n' "$*"
}

cd "$root" || exit 2
echo "buck2: $("$buck2" --version 2>/dev/null | head -1)   forge: $root/forge   logs: $out"

# ---- 1. conformance workspaces ---------------------------------------------------------
if [ "$skip" != conformance ]; then
  for engine in forge buck2; do
    echo "== conformance under $engine"
    if [ "$engine" = buck2 ]; then
      BUCK2="$buck2" CONFORMANCE_BUCK2_ISOLATION_DIR="$iso" nice conformance/run-under-buck2.sh \
        >"$out/conformance-$engine.log" 2>&1
    else
      nice cargo test -q -p forge --test conformance -- conformance_workspaces --nocapture \
        >"$out/conformance-$engine.log" 2>&1
    fi
    status=$?
    grep -E '^(ok|FAIL) ' "$out/conformance-$engine.log" | sed 's/^/  /'
    if [ $status -ne 0 ]; then
      differ "conformance under $engine does not meet expected.json (exit $status):"
      sed -n '/conformance case(s) failed/,/^stack backtrace/p' "$out/conformance-$engine.log"
    fi
  done
fi

# ---- 2. the project ----------------------------------------------------------------------
# Output paths of both engines in one notation: buck-out/<dir>/ and the 16-hex configuration
# hash after art/<cell>/ become placeholders.
normalise() {
  sed -E -e "s#buck-out/(forge|$iso)/#<BUCK_OUT>/#g" \
    -e 's#(<BUCK_OUT>/(art|gen|tmp)/[A-Za-z0-9_]+/)[0-9a-f]{16}(-[0-9a-f]{16})?/#\1<CFG>/#g'
}

# Digest of an xclbin modulo the isolation dir: its UUID hashes its sections, and section and
# archive-entry lengths count the bytes of the buck-out/<dir> paths it embeds (the simulated
# device's JSON, a Verilator model's build.log), so it is digested section by section, each
# flat archive (host/xclbin/src/archive.rs) entry by entry, with the paths normalised.
xclbin_digest() {
  python3 - "$1" "$iso" <<'PY'
import hashlib, struct, sys

path, iso = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()


def norm(b):
    for d in ("forge", iso):
        b = b.replace(b"buck-out/%s/" % d.encode(), b"<BUCK_OUT>/")
    return b


def payload(b):
    if not b.startswith(b"AFARCH1\0"):
        return norm(b)
    (count,), at, out = struct.unpack_from("<I", b, 8), 12, []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", b, at)
        name = b[at + 4:at + 4 + n]
        mode, size = struct.unpack_from("<IQ", b, at + 4 + n)
        at += 16 + n
        out.append(b"%s %o %s" % (name, mode, hashlib.sha256(norm(b[at:at + size])).hexdigest().encode()))
        at += size
    return b"\n".join(out)


header, section_headers = 8 + 4 + 28 + 256 + 8, 8 + 4 + 28 + 256 + 8 + 152
digest = hashlib.sha256(data[header + 48:header + 112])  # the platform
(count,) = struct.unpack_from("<I", data, header + 144)
for i in range(count):
    s = section_headers + 40 * i
    (kind,), name = struct.unpack_from("<I", data, s), data[s + 4:s + 20]
    offset, size = struct.unpack_from("<QQ", data, s + 24)
    digest.update(b"%d %s %s\n" % (kind, name, hashlib.sha256(payload(data[offset:offset + size])).hexdigest().encode()))
print(digest.hexdigest())
PY
}

# Digest of an output (a file, or every file of a directory with its relative path), with
# both isolation dirs written alike so that text outputs naming their own path compare equal.
content_digest() {
  local p="$1"
  if [ -f "$p" ] && [ "$(head -c 8 "$p" | tr '\0' '@')" = "xclbin2@" ]; then
    xclbin_digest "$p"
  elif [ -d "$p" ]; then
    (cd "$p" && find . -type f -o -type l | sort | while read -r f; do
      printf '%s ' "$f"
      if [ -L "$f" ]; then readlink "$f" | normalise; else normalise <"$f" | sha256sum; fi
    done) | sha256sum | cut -d' ' -f1
  elif [ -e "$p" ]; then
    normalise <"$p" | sha256sum | cut -d' ' -f1
  else
    echo missing
  fi
}

run_engine() { # engine, log name, args...
  local engine="$1" name="$2"
  shift 2
  if [ "$engine" = buck2 ]; then
    nice "$buck2" --isolation-dir "$iso" "$@" >"$out/$name.out" 2>"$out/$name.err"
  else
    nice ./forge "$@" >"$out/$name.out" 2>"$out/$name.err"
  fi
  echo $? >"$out/$name.rc"
}

# `✓ Pass: <label>` / `✗ Fail: <label>` ... as `<label> <verdict>` lines.
verdicts() {
  sed -E -e 's/^\[[^]]*\] //' -e 's/\x1b\[[0-9;]*m//g' "$1" |
    sed -nE 's/^(✓|✗) (Pass|Fail|Timeout|Fatal|Infra Failure|Omit|Skip): ([^ ]+).*/\3 \2/p' | sort
}

if [ "$skip" != workspace ]; then
  # shellcheck disable=SC2086 # the patterns are words
  set -- $patterns
  echo "== project: targets $*"
  for e in forge buck2; do run_engine "$e" "targets-$e" targets "$@"; done
  if ! diff <(sort "$out/targets-forge.out") <(sort "$out/targets-buck2.out") >"$out/targets.diff"; then
    differ "targets (< forge, > buck2):"; cat "$out/targets.diff"
  fi
  if ! diff -q "$out/targets-forge.out" "$out/targets-buck2.out" >/dev/null; then
    differ "targets are listed in a different order"
  fi

  echo "== project: build --show-output $*"
  for e in forge buck2; do run_engine "$e" "build-$e" build --show-output "$@"; done
  for e in forge buck2; do
    [ "$(cat "$out/build-$e.rc")" = 0 ] || { differ "build under $e failed:"; tail -30 "$out/build-$e.err"; }
  done
  if ! diff <(normalise <"$out/build-forge.out" | sort) <(normalise <"$out/build-buck2.out" | sort) >"$out/build.diff"; then
    differ "--show-output (< forge, > buck2):"; cat "$out/build.diff"
  fi
  # Contents, for each label both engines printed with a path.
  echo "   (xclbins compared section by section, modulo the buck-out/<dir> paths they embed)"
  join <(sort "$out/build-forge.out") <(sort "$out/build-buck2.out") |
    while read -r label fpath bpath; do
      if [ -z "${fpath:-}" ] || [ -z "${bpath:-}" ]; then continue; fi
      f=$(content_digest "$fpath")
      b=$(content_digest "$bpath")
      if [ "$f" != "$b" ]; then
        echo "DIFFERENCE: content of $label: forge $fpath, buck2 $bpath"
        if [ -f "$fpath" ] && [ -f "$bpath" ]; then
          diff <(normalise <"$fpath") <(normalise <"$bpath") 2>/dev/null | head -10
        elif [ -d "$fpath" ] && [ -d "$bpath" ]; then
          diff -rq "$fpath" "$bpath" | head -10
        fi
      fi
    done >"$out/contents.diff"
  if [ -s "$out/contents.diff" ]; then
    differences=$((differences + $(grep -c '^DIFFERENCE' "$out/contents.diff")))
    cat "$out/contents.diff"
  fi

  echo "== project: test $*"
  for e in forge buck2; do run_engine "$e" "test-$e" test "$@"; done
  if ! diff <(verdicts "$out/test-forge.err") <(verdicts "$out/test-buck2.err") >"$out/test.diff"; then
    differ "test verdicts (< forge, > buck2):"; cat "$out/test.diff"
  fi
  if [ "$(cat "$out/test-forge.rc")" != "$(cat "$out/test-buck2.rc")" ]; then
    differ "test exit status: forge $(cat "$out/test-forge.rc"), buck2 $(cat "$out/test-buck2.rc")"
  fi
  "$buck2" --isolation-dir "$iso" kill >/dev/null 2>&1
fi

if [ "$differences" -eq 0 ]; then
  echo "buck2 and forge agree (logs: $out)"
  exit 0
fi
echo "$differences difference(s) between buck2 and forge (logs: $out)"
exit 1
