#!/usr/bin/env bash
# Runs upstream buck2 and forge on the same files and prints every difference:
#   1. every conformance workspace under both engines, held to the same expected.json;
#   2. the project: `targets`, `build --show-output` (labels, output paths modulo the isolation
#      dir and configuration hash, output contents modulo the isolation dir) and `test` verdicts;
#   3. remote execution: a BuildGrid (`//remote:grid`) with two forge-re-workers; the long
#      actions of PARITY_REMOTE_TARGET (default //remote/standin:pnr) built by buck2 and by
#      forge with `-c ci.remote_exec=true` must run on the workers, give the same bytes as a
#      local build, and a second buck2 build after `buck2 clean` must come from the cache.
#
#   tools/checks/buck2_parity.sh BUCK2                     # everything
#   PARITY_PATTERNS='//finn/tiny/... //hw/aurora_flow:lint' tools/checks/buck2_parity.sh BUCK2
#   PARITY_SKIP='conformance workspace remote'             # leave out parts (any of the three)
#
# BUCK2 is the buck2 binary. buck2 runs with `--isolation-dir ${PARITY_ISOLATION_DIR:-parity}`
# (its outputs go to buck-out/<that dir>, forge's to buck-out/forge; part 3 uses
# <that dir>-re, as buck2 reads [buck2_re_client] only when its daemon starts, and only from
# files: part 3 writes .buckconfig.local for its run, so it refuses to run when one exists).
# Exit status: 0 when both
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

skipped() { case " $skip " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

differ() {
  differences=$((differences + 1))
  printf 'DIFFERENCE: %s\n' "$*"
}

cd "$root" || exit 2
echo "buck2: $("$buck2" --version 2>/dev/null | head -1)   forge: $root/forge   logs: $out"

# ---- 1. conformance workspaces ---------------------------------------------------------
if ! skipped conformance; then
  for engine in forge buck2; do
    echo "== conformance under $engine"
    if [ "$engine" = buck2 ]; then
      BUCK2="$buck2" CONFORMANCE_BUCK2_ISOLATION_DIR="$iso" nice conformance/run-under-buck2.sh \
        >"$out/conformance-$engine.log" 2>&1
    else
      nice cargo test -q -p forge --test all -- conformance::conformance_workspaces --nocapture \
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

is_xclbin() { [ -f "$1" ] && [ "$(head -c 8 "$1" | tr '\0' '@')" = "xclbin2@" ]; }

# A bundle's SHA256SUMS with each xclbin's sum replaced by its digest modulo the isolation dir
# (the sums of the other files stand: their contents are compared as they are).
checksums_digest() { # dir, SHA256SUMS path relative to it
  local dir="$1" sums="$2" hash name
  while read -r hash name; do
    if is_xclbin "$dir/$name"; then hash=$(xclbin_digest "$dir/$name"); fi
    printf '%s  %s\n' "$hash" "$name"
  done <"$dir/$sums" | sha256sum
}

# Digest of an output (a file, or every file of a directory with its relative path), with
# both isolation dirs written alike so that text outputs naming their own path compare equal.
content_digest() {
  local p="$1"
  if is_xclbin "$p"; then
    xclbin_digest "$p"
  elif [ -d "$p" ]; then
    (cd "$p" && find . -type f -o -type l | sort | while read -r f; do
      printf '%s ' "$f"
      if [ -L "$f" ]; then readlink "$f" | normalise
      elif is_xclbin "$f"; then xclbin_digest "$f"
      elif [ "$(basename "$f")" = SHA256SUMS ]; then checksums_digest "$(dirname "$f")" SHA256SUMS
      else normalise <"$f" | sha256sum; fi
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

if ! skipped workspace; then
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
  echo "   (xclbins, also inside directories and in a bundle's SHA256SUMS, compared section by section, modulo the buck-out/<dir> paths they embed)"
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

# ---- 3. remote execution ---------------------------------------------------------------
# The files under a target's output directory (buck-out/<dir>/art/<cell>/<cfg>/<pkg>/__<name>__/),
# and their SHA-256 with the path relative to it: the same list from two builds means the same
# bytes. forge's are deleted before each of its builds (forge keeps an existing output whose
# digest matches the result, which would make the comparison its own).
target_files() { # buck-out dir name, //pkg:name
  local pkg="${2#//}" name
  name="${pkg#*:}"
  pkg="${pkg%%:*}"
  find "buck-out/$1/art" -path "*/$pkg/__${name}__/*" -type f 2>/dev/null
}
target_sums() { # buck-out dir name, //pkg:name
  target_files "$@" | while read -r f; do
    printf '%s %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "${f##*/__*__/}"
  done | sort -k2
}

# Leases the workers have finished so far (a worker logs `running` again on each update).
leases() { cat "$out"/worker-*.log 2>/dev/null | grep -o 'lease [^:]*: done$' | sort -u | wc -l; }

# `buck2 log what-ran` of the last command: `<executor>` per action of the target, one a line.
executors() { # target
  "$buck2" --isolation-dir "$iso_re" log what-ran 2>/dev/null |
    awk -F'\t' -v t="root${1}" 'index($2, t " ") == 1 { sub(/\(.*/, "", $3); print $2 "\t" $3 }' |
    sort -u
}

stop_remote() {
  for p in ${worker_pids:-} ${grid_pid:-}; do kill "$p" 2>/dev/null; done
  for p in ${worker_pids:-} ${grid_pid:-}; do wait "$p" 2>/dev/null; done
  worker_pids='' grid_pid=''
  [ "${wrote_local:-}" = 1 ] && rm -f .buckconfig.local
  wrote_local=''
  "$buck2" --isolation-dir "$iso_re" kill >/dev/null 2>&1
}

if ! skipped remote; then
  target="${PARITY_REMOTE_TARGET:-//remote/standin:pnr}"
  iso_re="$iso-re"
  echo "== remote execution: $target on //remote:grid with 2 workers, buck2 and forge"
  if [ -e .buckconfig.local ]; then
    differ "remote part not run: it writes .buckconfig.local, and one exists (move it away, or PARITY_SKIP=remote)"
  elif ! nice ./forge build //remote:grid //remote:worker --show-output >"$out/re-tools.out" 2>"$out/re-tools.err"; then
    differ "building //remote:grid and //remote:worker failed:"; tail -20 "$out/re-tools.err"
  else
    trap stop_remote EXIT
    grid=$(awk '$1 == "root//remote:grid" { print $2 }' "$out/re-tools.out")
    worker=$(awk '$1 == "root//remote:worker" { print $2 }' "$out/re-tools.out")
    # As root, BuildGrid's PostgreSQL runs as `postgres`, which must be able to enter $out.
    chmod o+x "$out"
    "$grid" serve --dir "$out/grid" >"$out/grid.out" 2>"$out/grid.err" &
    grid_pid=$!
    for _ in $(seq 1 300); do
      [ -s "$out/grid/address" ] || ! kill -0 "$grid_pid" 2>/dev/null && break
      sleep 0.5
    done
    address=$(cat "$out/grid/address" 2>/dev/null)
    if [ -z "$address" ]; then
      differ "forge-re-grid serve did not start:"; tail -20 "$out/grid.err"
    else
      worker_pids=''
      for i in 1 2; do
        "$worker" --address "$address" --name "parity-$i" --property OSFamily=linux \
          --property "fpga-tools=sim" >"$out/worker-$i.log" 2>&1 &
        worker_pids="$worker_pids $!"
      done
      printf '[buck2_re_client]\n  address = %s\n  tls = false\n' "$address" >.buckconfig.local
      wrote_local=1
      "$buck2" --isolation-dir "$iso_re" kill >/dev/null 2>&1
      # A different action length per build (the outputs do not depend on it), so no build
      # is served from another's cache: each of the first three really executes.
      run=$(date +%N | cut -c1-4)
      remote_build() { # engine, log name, seconds
        local engine="$1" name="$2"
        if [ "$engine" = buck2 ]; then
          nice "$buck2" --isolation-dir "$iso_re" build "$target" -c ci.remote_exec=true \
            -c "standin.seconds=$3" >"$out/$name.out" 2>"$out/$name.err"
        else
          nice ./forge build "$target" -c "ci.remote_exec=$4" -c "standin.seconds=$3" \
            >"$out/$name.out" 2>"$out/$name.err"
        fi || differ "$name: the build failed:" "$(tail -15 "$out/$name.err")"
      }
      target_files forge "$target" | xargs -r rm -f
      remote_build forge re-forge-local "1.${run}1" false
      target_sums forge "$target" >"$out/re-local.sums"
      target_files forge "$target" | xargs -r rm -f
      before=$(leases)
      remote_build forge re-forge "1.${run}2" true
      target_sums forge "$target" >"$out/re-forge.sums"
      forge_leases=$(($(leases) - before))
      grep -E '^Commands: ' "$out/re-forge.err" | sed 's/^/   forge:  /'
      before=$(leases)
      remote_build buck2 re-buck2 "1.${run}3"
      target_sums "$iso_re" "$target" >"$out/re-buck2.sums"
      buck2_leases=$(($(leases) - before))
      executors "$target" >"$out/re-buck2.ran"
      grep -E 'Commands: ' "$out/re-buck2.err" | sed 's/^.*Commands/   buck2:  Commands/'
      nice "$buck2" --isolation-dir "$iso_re" clean >/dev/null 2>&1
      before=$(leases)
      remote_build buck2 re-buck2-cached "1.${run}3"
      target_sums "$iso_re" "$target" >"$out/re-buck2-cached.sums"
      cached_leases=$(($(leases) - before))
      executors "$target" >"$out/re-buck2-cached.ran"
      grep -E 'Commands: ' "$out/re-buck2-cached.err" | sed 's/^.*Commands/   buck2 after clean:  Commands/'

      n=$(wc -l <"$out/re-local.sums")
      echo "   $n output file(s); leases run on the workers: forge $forge_leases, buck2 $buck2_leases, buck2 after clean $cached_leases"
      [ "$n" -gt 0 ] || differ "the local build of $target wrote no files under its output directory"
      for b in re-forge re-buck2 re-buck2-cached; do
        diff "$out/re-local.sums" "$out/$b.sums" >"$out/$b.diff" ||
          { differ "$b: outputs differ from the local build's (< local, > $b):"; cat "$out/$b.diff"; }
      done
      ran=$(wc -l <"$out/re-buck2.ran")
      not_re=$(grep -vc $'\tre$' "$out/re-buck2.ran")
      if [ "$ran" -eq 0 ] || [ "$not_re" -ne 0 ]; then
        differ "buck2: not every action of $target ran remotely (what-ran):"; cat "$out/re-buck2.ran"
      fi
      [ "$buck2_leases" -ge "$ran" ] ||
        differ "buck2: $ran action(s) remote, but the workers started only $buck2_leases lease(s)"
      [ "$forge_leases" -ge "$n" ] ||
        differ "forge: $n output(s), but the workers started only $forge_leases lease(s)"
      not_cached=$(grep -vc $'\tcache$' "$out/re-buck2-cached.ran")
      if [ "$not_cached" -ne 0 ] || [ "$cached_leases" -ne 0 ]; then
        differ "buck2 after clean: not all from the action cache ($cached_leases lease(s)):"
        cat "$out/re-buck2-cached.ran"
      fi
    fi
    stop_remote
    trap - EXIT
  fi
fi

if [ "$differences" -eq 0 ]; then
  echo "buck2 and forge agree (logs: $out)"
  exit 0
fi
echo "$differences difference(s) between buck2 and forge (logs: $out)"
exit 1
