#!/bin/sh
# Reports what an action sees; every line is a fact the expectation pins down.
report="$1"
tree="$2"
shift 2
{
  echo "argc=$#"
  for a in "$@"; do echo "arg=$a"; done
  if [ -f tools/input.txt ]; then echo "sources: project-relative"; else echo "sources: missing"; fi
  if [ -d "$(dirname "$report")" ]; then echo "report parent: exists"; else echo "report parent: missing"; fi
  if [ -e "$report" ]; then echo "report before action: present"; else echo "report before action: absent"; fi
  if [ -e "$tree" ]; then echo "dir before action: present"; else echo "dir before action: absent"; fi
  echo "BUCK_SCRATCH_PATH=$BUCK_SCRATCH_PATH"
  case "$BUCK_SCRATCH_PATH" in
    /*) echo "scratch: absolute" ;;
    *) echo "scratch: relative" ;;
  esac
  if [ -d "$BUCK_SCRATCH_PATH" ] && [ -z "$(ls -A "$BUCK_SCRATCH_PATH")" ]; then echo "scratch: exists, empty"; else echo "scratch: not an empty dir"; fi
  if [ "$TMPDIR" = "$PWD/$BUCK_SCRATCH_PATH" ]; then echo "TMPDIR: \$PWD/\$BUCK_SCRATCH_PATH"; else echo "TMPDIR: other"; fi
  echo "IN=$IN"
  echo "PLAIN=$PLAIN"
  if [ -n "$PATH" ]; then echo "PATH: set"; else echo "PATH: unset"; fi
} > "$report.tmp"
mkdir -p "$tree/sub"
echo a > "$tree/a.txt"
echo b > "$tree/sub/b.txt"
mv "$report.tmp" "$report"
