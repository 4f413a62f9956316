#!/usr/bin/env bash
# Every package declares its style tests: each BUCK file of the project (outside the
# directories `[project] ignore` names, buck-out and dot directories) calls `style_checks(`
# (rules/style.bzl), or is listed below with the reason it cannot. A package without the call
# would keep its files out of `./forge test //...` silently.
set -euo pipefail

# package BUCK -> why it has no style_checks()
declare -A exempt=(
    [platforms/BUCK]="engine/forge/tests/remote_cache.rs copies it alone into projects without rules/"
)

ignored=$(sed -n 's/^[[:space:]]*ignore[[:space:]]*=//p' .buckconfig | tr ',' ' ')
prune=(-path ./buck-out -o -name '.*' -a ! -name .)
for dir in $ignored; do
    prune+=(-o -path "./$dir")
done

missing=0
checked=0
while IFS= read -r buck; do
    buck=${buck#./}
    checked=$((checked + 1))
    if [ -n "${exempt[$buck]:-}" ]; then
        continue
    fi
    if ! grep -q '^style_checks(' "$buck"; then
        echo "style_coverage: $buck does not call style_checks() (rules/style.bzl): its files have no style tests." >&2
        echo "  Add \`load(\"//rules:style.bzl\", \"style_checks\")\` and \`style_checks()\` (with cargo_package = \"NAME\" for a crate)." >&2
        missing=$((missing + 1))
    fi
done < <(find . \( "${prune[@]}" \) -prune -o -type f -name BUCK -print | LC_ALL=C sort)

# The exemptions must still be packages: a stale entry would hide nothing but mislead.
for buck in "${!exempt[@]}"; do
    [ -f "$buck" ] || { echo "style_coverage: exempt $buck no longer exists; drop it from $0" >&2; missing=$((missing + 1)); }
done

echo "style_coverage: $checked BUCK files, ${#exempt[@]} exempt, $missing without style tests" >&2
[ "$checked" -gt 0 ] && [ "$missing" -eq 0 ]
