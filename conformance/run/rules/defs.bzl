_SCRIPT = """#!/bin/sh
i=0
echo "0=$0"
for a in "$@"; do
  i=$((i + 1))
  echo "$i=$a"
done
echo "cwd=$(pwd)"
if [ -n "$BUCK_RUN_BUILD_ID" ]; then echo "BUCK_RUN_BUILD_ID: set"; fi
echo "to stderr" >&2
if [ "$#" -gt 0 ]; then
  for last in "$@"; do :; done
  if [ "$last" = "exit5" ]; then exit 5; fi
fi
exit 0
"""

def _hello_impl(ctx: AnalysisContext) -> list[Provider]:
    script = ctx.actions.declare_output("hello.sh")
    ctx.actions.write(script, _SCRIPT, is_executable = True)
    return [
        DefaultInfo(default_output = script),
        RunInfo(args = cmd_args(script, ctx.attrs.data, "literal arg")),
    ]

hello = rule(
    impl = _hello_impl,
    attrs = {"data": attrs.source()},
)
