"""Stand-in place & route: long, independent actions for remote execution where the FPGA
tools are absent.

`pnr_standin` declares `count` actions, category `place_route_standin`, identifier `<i>`,
each running `//remote/standin:pnr_standin` (an `exec_dep`, so the binary is an input of the
action and a remote worker gets it from the CAS) on `src`: it sleeps `seconds`, then writes
`fpga<i>.bit`, a few hundred KiB that depend only on `src` and `i`. None is `local_only`:
under `-c ci.remote_exec=true` they go to the workers, while the cargo build of the tool
stays on this machine. The outputs are the target's default outputs; sub-target `fpga<i>`
names one.
"""

def _pnr_standin_impl(ctx: AnalysisContext) -> list[Provider]:
    if ctx.attrs.count < 1:
        fail("{}: count = {}: need at least one action".format(ctx.label, ctx.attrs.count))
    bits = []
    sub_targets = {}
    for i in range(ctx.attrs.count):
        out = ctx.actions.declare_output("fpga{}.bit".format(i))
        ctx.actions.run(
            cmd_args(
                ctx.attrs._tool[RunInfo],
                "--input",
                ctx.attrs.src,
                "--index",
                str(i),
                "--seconds",
                ctx.attrs.seconds,
                "--out",
                out.as_output(),
            ),
            category = "place_route_standin",
            identifier = str(i),
        )
        bits.append(out)
        sub_targets["fpga{}".format(i)] = [DefaultInfo(default_output = out)]
    return [DefaultInfo(default_outputs = bits, sub_targets = sub_targets)]

pnr_standin = rule(
    impl = _pnr_standin_impl,
    attrs = {
        "count": attrs.int(default = 8, doc = "how many actions (and fpga<i>.bit files)"),
        "seconds": attrs.string(default = "3", doc = "wall time each action takes (decimal seconds)"),
        "src": attrs.source(doc = "the file every output is derived from (a netlist's stand-in)"),
        "_tool": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//remote/standin:pnr_standin",
        )),
    },
    doc = "`count` stand-in place & route actions of `seconds` each, outputs `fpga<i>.bit`.",
)
