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
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

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

echo "floors: $checked references checked, $violations going upward" >&2
[ "$checked" -gt 0 ] && [ "$violations" -eq 0 ]
