#!/usr/bin/env bash
# `nix develop` has every tool the bootstrap installs: tools/bootstrap/tools.toml is the one
# list (apt.txt is generated from it, flake.nix reads it), and this check asserts
#   1. the list is complete: every entry has nixpkgs attributes, every attribute the record
#      of where it was confirmed in nixpkgs, every Python environment its entry
#      (tools/checks/tools_list.nix), and flake.nix pins nixpkgs to the list's revision;
#   2. flake.nix parses and passes `nix flake check`;
#   3. the shell's inputs (packages and buildInputs) for x86_64-linux and aarch64-linux hold
#      every attribute of the list;
#   4. and that 1 and 3 can fail: a copy of the list with a record removed fails 1, a copy of
#      the flake whose list lacks the first tool's attributes fails 3 naming them.
#
# No Nix binary cache is reachable from the build machines, so nixpkgs is replaced by a
# stand-in flake (tools/checks/nixpkgs-stub, whose packages are exactly the list's recorded
# attributes) through `--override-input`, the store is a throwaway directory, and nix runs
# without network (`unshare -n`): the check evaluates the flake exactly as `nix develop`
# would, it does not build anything. That the attributes exist in the real nixpkgs at the
# pinned revision is what the list's records say, not something evaluated here
# (docs/limits.md). nix comes from nix-bin (tools/bootstrap/tools.toml); without it this
# test fails.
set -euo pipefail

flake=flake.nix
toml=tools/bootstrap/tools.toml
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$PWD
for tool in nix nix-instantiate unshare; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "flake_check: \`$tool\` is not installed; \`./forge\` installs nix-bin from" \
            "tools/bootstrap/apt.txt (or run \`apt-get install nix-bin\`)." >&2
        exit 1
    fi
done

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export NIX_CONFIG=$'experimental-features = nix-command flakes\nflake-registry =\nbuild-users-group =\n'
export HOME="$work/home" XDG_CACHE_HOME="$work/cache"
mkdir -p "$HOME"

# Without network: as root a new network namespace is enough; otherwise a user namespace
# maps us to root inside it first.
offline=(unshare -n)
[ "$(id -u)" -eq 0 ] || offline=(unshare -r -n)
nix_offline() {
    "${offline[@]}" nix --store "$work/store" "$@"
}
# A Nix expression's value as text (the expression reads files by absolute path).
nix_text() {
    nix_offline eval --impure --raw --expr "$1"
}

# 1. The list. Errors of tools_list.nix, one per line, for the list at $1.
venv_dirs=""
for dir in "$root"/tools/bootstrap/python/*/; do
    venv_dirs+=" \"$(basename "$dir")\""
done
list_errors() {
    nix_text "builtins.concatStringsSep \"\\n\" (import $here/tools_list.nix {
        toml = $1; venvDirs = [$venv_dirs ]; })"
}
# Each error of the list at $2 (shown as $1) prefixed with file:line of the entry it names.
with_lines() {
    local shown=$1 file=$2 err needle line
    while IFS= read -r err; do
        case "$err" in
            "[[tool]] apt = "* | "[[venv]] name = "*) needle=${err#*]] } && needle=${needle%%: *} ;;
            "[nixpkgs.attr] "*) needle=${err#"[nixpkgs.attr] "} && needle="${needle%%:*} = {" ;;
            *) needle="" ;;
        esac
        line=""
        [ -z "$needle" ] || line=$(grep -nF -m1 -- "$needle" "$file" | cut -d: -f1 || true)
        echo "$shown${line:+:$line}: $err"
    done
}
errors=$(list_errors "$root/$toml")
if [ -n "$errors" ]; then
    echo "$toml is incomplete:" >&2
    with_lines "$toml" "$root/$toml" <<<"$errors" >&2
    exit 1
fi
rev=$(nix_text "(builtins.fromTOML (builtins.readFile $root/$toml)).nixpkgs.rev")
if ! grep -q "^ *inputs\.nixpkgs\.url = \"github:NixOS/nixpkgs/$rev\";" "$flake"; then
    echo "$flake does not pin nixpkgs to $toml's revision: it needs" \
        "inputs.nixpkgs.url = \"github:NixOS/nixpkgs/$rev\";" >&2
    exit 1
fi
wanted=$(nix_text "builtins.concatStringsSep \" \" (builtins.concatMap (e: e.nix)
    (let l = builtins.fromTOML (builtins.readFile $root/$toml); in l.tool ++ l.venv))")
echo "$toml: $(tr ' ' '\n' <<<"$wanted" | sort -u | wc -l) nixpkgs attributes, each recorded at nixpkgs $rev"

# 2. The flake. Only flake.nix and the list are copied: `path:` of the project root would
# copy the whole tree.
if ! out=$(nix-instantiate --parse "$flake" 2>&1 >/dev/null); then
    echo "$flake does not parse:" >&2
    echo "$out" >&2
    exit 1
fi
echo "$flake parses ($(nix --version))"
mkdir -p "$work/flake/tools/bootstrap" "$work/stub"
cp "$flake" "$work/flake/flake.nix"
cp "$toml" "$work/flake/$toml"
cp "$here/nixpkgs-stub/flake.nix" "$toml" "$work/stub/"
override=(--offline --no-write-lock-file --override-input nixpkgs "path:$work/stub")
if ! out=$(nix_offline flake check --no-build "${override[@]}" "path:$work/flake" 2>&1); then
    echo "\`nix flake check\` of $flake fails:" >&2
    echo "$out" >&2
    exit 1
fi
echo "nix flake check: ok"

# 3. The shell. Prints the attributes of $wanted that the shell of the flake in $1 lacks for
# system $2 (the stand-in's packages are named by their attribute).
shell_lacks() {
    local names want missing=()
    if ! names=$(nix_offline eval --raw "${override[@]}" "path:$1#devShells.$2.default" \
        --apply 'sh: builtins.concatStringsSep " " (map (p: p.name) (sh.packages ++ sh.buildInputs))' \
        2>"$work/err"); then
        echo "the devShell of $flake for $2 does not evaluate:" >&2
        cat "$work/err" >&2
        return 1
    fi
    for want in $wanted; do
        case " $names " in
            *" $want "*) ;;
            *) missing+=("$want") ;;
        esac
    done
    echo "${missing[*]}"
}
failed=0
for system in x86_64-linux aarch64-linux; do
    lacks=$(shell_lacks "$work/flake" "$system")
    if [ -n "$lacks" ]; then
        echo "the devShell of $flake for $system lacks: $lacks (tools/bootstrap/tools.toml lists them)" >&2
        failed=1
    else
        echo "nix develop ($system) has all of them"
    fi
done
[ "$failed" -eq 0 ] || exit 1

# 4. The check fails when it should. A list with the record of its first tool's first
# attribute removed is incomplete:
first=$(awk '/^\[\[tool\]\]/ { t = 1 } t && /^nix = \[/ { print; exit }' "$toml" |
    sed -e 's/^nix = \[//' -e 's/\].*//' -e 's/[",]/ /g' | xargs)
one=${first%% *}
mkdir -p "$work/minus"
grep -v "^$one = {" "$toml" >"$work/minus/tools.toml"
errors=$(list_errors "$work/minus/tools.toml")
case "$errors" in
    *"nixpkgs attribute \`$one\` has no [nixpkgs.attr] record"*)
        echo "without the record of \`$one\` the list is incomplete: ok" ;;
    *)
        echo "flake_check: a list without the record of \`$one\` passed the list check; got: $errors" >&2
        exit 1 ;;
esac
# and a flake whose list gives the first tool no attributes lacks exactly them.
cp -r "$work/flake" "$work/minus/flake"
awk '/^\[\[tool\]\]/ { t = 1 } t && !done && /^nix = \[/ { $0 = "nix = []"; done = 1 } { print }' \
    "$toml" >"$work/minus/flake/$toml"
lacks=$(shell_lacks "$work/minus/flake" x86_64-linux)
if [ "$lacks" != "$first" ]; then
    echo "flake_check: a shell without the first tool ($first) was reported as lacking \"$lacks\"" >&2
    exit 1
fi
echo "a shell without the first tool lacks: $lacks (as it should)"
