#!/usr/bin/env bash
# The floors of the house go one way: engine -> rules -> domain (hw, finn, host, remote) ->
# deploy. A file may load, default to or link against its own floor and the floors below it,
# never above (docs/architecture.md, "Floors"). Three kinds of reference are checked:
#
#   load()        every `load("...")` of a .bzl or BUCK file;
#   defaults      every `default = "root//..."` / `"//..."` label of a .bzl file (a rule
#                 attribute's default: what a rule reaches without its user naming it);
#   path deps     every `path = "..."` dependency of a Cargo.toml ([dependencies] and
#                 [dev-dependencies] alike: the engine's tests must not need a floor above).
#
# A BUCK file describes its package's build, which every floor makes with the rules: the
# engine's BUCK files count as rules/ for their loads. toolchains/ is the one composition root (it may name anything: that is how a rule reaches a
# domain tool); the root package, tools/, bench/ and conformance/ sit outside the floors.
# Test data (a test's `data`/`env` naming a deployment's outputs) is not a reference of
# the kinds above and is not checked.
#
# Nothing writes into rules/ from outside it (rules/ is self-contained, as buck2's prelude):
#   writers       a program outside rules/ (.rs, .py, .sh, .tcl; not its tests) that names a
#                 path under rules/ in a string ("rules/x.bzl", "$ROOT/rules/..", "rules"):
#                 a generator names its output that way, and code above the rules reaches
#                 them by load(), never by path;
#   generated     a file under rules/ whose header says "Generated from/by" a path above
#                 the rules' floor (a domain tool or a domain file as its source).
#
#   floors.sh [ROOT]    checks ROOT (default: this checkout; tools/checks/floors_test.sh
#                       runs it on scratch trees with planted violations)
set -euo pipefail
cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}"

# The floor of a project path (a directory or file, no leading //): 0 engine, 1 rules,
# 2 domain, 3 deploy (and apps/, the user applications it deploys); "-" outside the floors.
floor_of() {
    case "$1" in
    engine | engine/*) echo 0 ;;
    rules | rules/* | prelude | prelude/* | platforms | platforms/*) echo 1 ;;
    hw | hw/* | finn | finn/* | host | host/* | remote | remote/* | paper | paper/*) echo 2 ;;
    deploy | deploy/* | apps | apps/*) echo 3 ;;
    *) echo - ;;
    esac
}

names=(engine rules domain deploy)
violations=0
checked=0

# check FILE TARGET_PATH WHAT: fails when TARGET_PATH's floor is above FILE's.
check() {
    local file=$1 target=$2 what=$3 from to
    from=$(floor_of "$file")
    to=$(floor_of "$target")
    # A BUCK file describes how its package is built, and everything is built with the
    # rules: the engine's own BUCK files load rules/ as every package does.
    if [[ $file == BUCK || $file == */BUCK ]] && [ "$from" = 0 ]; then
        from=1
    fi
    checked=$((checked + 1))
    [ "$from" != - ] && [ "$to" != - ] || return 0
    if [ "$to" -gt "$from" ]; then
        echo "floors: $file ($what) reaches $target: ${names[$to]} is above ${names[$from]}." >&2
        echo "  Reach it through a toolchain provider instantiated in toolchains/BUCK, or move the code to its floor." >&2
        violations=$((violations + 1))
    fi
}

# A label's package path: `root//a/b:c` or `//a/b:c` or `@root//a/b:c.bzl` -> a/b.
label_path() {
    local l=${1#@}
    l=${l#root}
    l=${l#//}
    echo "${l%%:*}"
}

starlark_files() {
    find . \( -path ./buck-out -o -path ./target -o -path ./conformance -o -name '.*' -a ! -name . \) -prune \
        -o -type f \( -name BUCK -o -name '*.bzl' \) -print | sed 's#^\./##' | LC_ALL=C sort
}

while IFS= read -r file; do
    while IFS= read -r label; do
        case "$label" in
        :* | //* | @root//* | root//*) ;;
        *) continue ;;
        esac
        [[ $label == :* ]] && continue # the file's own package
        check "$file" "$(label_path "$label")" "load"
    done < <(sed -n 's/^load("\([^"]*\)".*/\1/p' "$file")
    if [[ $file == *.bzl ]]; then
        while IFS= read -r label; do
            check "$file" "$(label_path "$label")" "default"
        done < <(grep -o 'default = "\(root\)\?//[^"]*"' "$file" | sed 's/^default = "\(.*\)"$/\1/')
    fi
done < <(starlark_files)

while IFS= read -r manifest; do
    dir=$(dirname "$manifest")
    while IFS= read -r rel; do
        target=$(realpath -m --relative-to=. "$dir/$rel")
        check "$manifest" "$target" "path dependency"
    done < <(sed -n 's/.*path = "\([^"]*\)".*/\1/p' "$manifest" | grep -v '^src/\|\.rs$' || true)
done < <(find . \( -path ./buck-out -o -path ./target -o -name '.*' -a ! -name . \) -prune \
    -o -type f -name Cargo.toml -print | sed 's#^\./##' | LC_ALL=C sort)

# Writers: a string naming rules/ or a path under it, in a program outside rules/. Comment
# lines and test code (tests/ folders, *_test.*, tests.rs, a Rust file from `#[cfg(test)]`
# on) are not programs that run in the build.
writer_files() {
    find . \( -path ./buck-out -o -path ./target -o -path ./conformance -o -path ./rules -o -name '.*' -a ! -name . \) -prune \
        -o -type f \( -name '*.rs' -o -name '*.py' -o -name '*.sh' -o -name '*.tcl' \) -print | sed 's#^\./##' | LC_ALL=C sort
}
rules_path='["'"'"'`](\$\{?[A-Za-z_]+\}?/|\./)?rules(/|["'"'"'`])'
while IFS= read -r file; do
    case "$file" in
    */tests/* | tests/* | */test/* | */testdata/* | */fixtures/* | *_test.* | */tests.rs) continue ;;
    esac
    [ "$(floor_of "$file")" != - ] || continue
    checked=$((checked + 1))
    while IFS=: read -r line text; do
        echo "floors: $file:$line names a path under rules/ (${text#"${text%%[![:space:]]*}"})." >&2
        echo "  Nothing outside rules/ writes into it: generate the file beside its generator (as hw/aurora_flow/desc.bzl) and load it from there." >&2
        violations=$((violations + 1))
    done < <(awk '/^[[:space:]]*#\[cfg\(test\)\]/ && FILENAME ~ /\.rs$/ { exit }
                  /^[[:space:]]*(\/\/|#|\*|\/\*)/ { next }
                  { print FNR ":" $0 }' "$file" | grep -E "^[0-9]+:.*$rules_path" || true)
done < <(writer_files)

# Generated files under rules/: the paths of the header's "Generated from/by" sentence (to
# its first `;` or `. `, within the first 3 lines) name the source and the generator; none
# may be above the rules.
while IFS= read -r file; do
    header=$(head -n 3 "$file" | sed '/^[[:space:]]*$/,$d')
    grep -qE '^[[:space:]]*(#|"""|//!?|/\*|--)?[[:space:]]*Generated (from|by) ' <<<"$header" || continue
    header=$(tr '\n' ' ' <<<"$header" | sed -E 's/.*(Generated (from|by) )/\1/; s/(;|\. ).*//')
    while IFS= read -r path; do
        checked=$((checked + 1))
        to=$(floor_of "$path")
        if [ "$to" != - ] && [ "$to" -gt 1 ]; then
            echo "floors: $file is generated from or by $path: ${names[$to]} is above rules." >&2
            echo "  Generate it beside its generator (its own floor) and load it from there; rules/ holds no domain output." >&2
            violations=$((violations + 1))
        fi
    done < <(grep -oE '[a-z][a-z0-9_-]*/[A-Za-z0-9_./-]*' <<<"$header" | sed 's#/*$##' | LC_ALL=C sort -u)
done < <(find rules \( -name target -o -name '.*' \) -prune -o -type f -print | LC_ALL=C sort)

echo "floors: $checked references checked, $violations going upward" >&2
[ "$checked" -gt 0 ] && [ "$violations" -eq 0 ]
