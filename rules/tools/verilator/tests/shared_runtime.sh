#!/usr/bin/env bash
# The toolchain's shared Verilator runtime (build_model.sh --runtime-only / --runtime):
# a testbench built against it links the shared objects instead of compiling its own and
# behaves as the same testbench built by Verilator alone (the reference); one built with
# other runtime settings (--trace) is built with its own runtime, and behaves and traces as
# Verilator alone builds it.
#   shared_runtime.sh      (VERILATOR from the toolchain, in the environment)
set -euo pipefail
build_model=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../build_model.sh")
: "${VERILATOR:?the Verilator toolchain sets VERILATOR}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

cat >top.sv <<'SV'
module forge_verilator_runtime; initial begin #1 $finish; end endmodule
SV
cat >tb.sv <<'SV'
module tb;
  logic clk = 0;
  always #5 clk = ~clk;
  int n = 0;
  int unsigned acc = 32'h1234_5678;
  always @(posedge clk) begin
    n <= n + 1;
    acc <= {acc[30:0], acc[31] ^ acc[21] ^ acc[1] ^ acc[0]};
    if (n == 1000) begin
      $display("n=%0d acc=%08x t=%0t", n, acc, $time);
      $finish;
    end
  end
  initial if ($test$plusargs("trace")) begin $dumpfile("tb.vcd"); $dumpvars; end
endmodule
SV
args=(--binary --timing -j 2)
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$build_model" --runtime-only runtime "$VERILATOR" -- "${args[@]}" top.sv --top-module forge_verilator_runtime -o sim
for f in verilated.o verilated_timing.o runtime.sig; do
  [ -s "runtime/$f" ] || fail "the runtime directory lacks $f: $(ls runtime)"
done

# the reference: Verilator alone, in its own directory
"$VERILATOR" "${args[@]}" tb.sv --top-module tb -o sim --Mdir ref >/dev/null 2>&1 || fail "Verilator alone cannot build tb.sv"
"$VERILATOR" "${args[@]}" --trace tb.sv --top-module tb -o sim --Mdir ref_trace >/dev/null 2>&1 || fail "Verilator alone cannot build tb.sv --trace"

bash "$build_model" --runtime runtime shared "$VERILATOR" -- "${args[@]}" tb.sv --top-module tb -o sim
if grep -q 'verilated\.cpp' shared/build.log; then
  fail "the model compiled verilated.cpp although the shared runtime matches: $(cat shared/build.log)"
fi
[ "$(shared/sim)" = "$(ref/sim)" ] || fail "the model on the shared runtime prints '$(shared/sim)', Verilator alone '$(ref/sim)'"

bash "$build_model" --runtime runtime traced "$VERILATOR" -- "${args[@]}" --trace tb.sv --top-module tb -o sim 2>retry.log
grep -q "runtime settings differ" retry.log || fail "a --trace model was not rebuilt with its own runtime"
grep -q 'verilated_vcd_c\.cpp' traced/build.log || fail "the --trace model did not compile its tracing runtime"
(cd traced && ./sim +trace >out.txt) && (cd ref_trace && ./sim +trace >out.txt)
cmp -s traced/out.txt ref_trace/out.txt || fail "the --trace model prints '$(cat traced/out.txt)', Verilator alone '$(cat ref_trace/out.txt)'"
cmp -s traced/tb.vcd ref_trace/tb.vcd || fail "the --trace model's VCD differs from Verilator alone's"
echo "PASS: shared runtime linked where it matches ($(ref/sim | head -1)); a --trace model got its own runtime"
