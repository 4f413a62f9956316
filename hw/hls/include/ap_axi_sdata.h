// AXI4-Stream side-channel types for C simulation (UG1399 "AXI4-Stream Interfaces with
// Side-Channels"): `ap_axiu<D, U, TI, TD>` (unsigned data) and `ap_axis<D, U, TI, TD>`
// (signed data) with data, keep, strb, user, last, id, dest. A side channel of width 0 is
// absent in hardware; here it is a 1-bit field that is never transferred.
// The vendor package (AMD's arbitrary-precision types from the hls4ml wheel) has no
// ap_axi_sdata.h, so this one stays ours; its members are AMD's ap_uint / ap_int.
#ifndef AF_AP_AXI_SDATA_H
#define AF_AP_AXI_SDATA_H

#include <ap_int.h>  // AMD's, from the vendor include directory

#include <type_traits>

#include "hls_stream.h"

namespace af_axi {
constexpr int at_least_1(int n) { return n > 0 ? n : 1; }
}  // namespace af_axi

template <int D, int U, int TI, int TD, bool SIGNED>
struct ap_axi_beat {
    std::conditional_t<SIGNED, ap_int<D>, ap_uint<D>> data;
    ap_uint<(D + 7) / 8> keep;
    ap_uint<(D + 7) / 8> strb;
    ap_uint<af_axi::at_least_1(U)> user;
    ap_uint<1> last;
    ap_uint<af_axi::at_least_1(TI)> id;
    ap_uint<af_axi::at_least_1(TD)> dest;
};

template <int D, int U = 0, int TI = 0, int TD = 0>
using ap_axiu = ap_axi_beat<D, U, TI, TD, false>;
template <int D, int U = 0, int TI = 0, int TD = 0>
using ap_axis = ap_axi_beat<D, U, TI, TD, true>;

namespace af {

// TDATA, TKEEP (first 64 bytes, the ABI's `keep`) and TLAST cross the ABI; TSTRB is set
// equal to TKEEP on reception; TUSER/TID/TDEST are not carried by ABI version 1.
template <int D, int U, int TI, int TD, bool SIGNED>
struct beat_traits<ap_axi_beat<D, U, TI, TD, SIGNED>> {
    using beat = ap_axi_beat<D, U, TI, TD, SIGNED>;
    using data_traits = beat_traits<ap_int_base<D, SIGNED>>;  // `data` derives from it
    static constexpr int bits = D;
    static constexpr bool has_last = true;
    static constexpr bool has_keep = true;
    static constexpr int keep_bits = (D + 7) / 8;
    static void to_beat(const beat& v, af_beat& b) {
        data_traits::pack(v.data, b.data, b.bytes);
        b.keep = (keep_bits > 64 ? v.keep.range(63, 0) : v.keep.range(keep_bits - 1, 0)).to_uint64();
        b.last = v.last[0] ? 1 : 0;
    }
    static void from_beat(const af_beat& b, beat& v) {
        data_traits::unpack(b.data, b.bytes, v.data);
        v.keep = ~ap_uint<keep_bits>();
        constexpr int hi = keep_bits > 64 ? 63 : keep_bits - 1;
        v.keep.range(hi, 0) = ap_uint<hi + 1>(b.keep);
        v.strb = v.keep;
        v.last = b.last ? 1 : 0;
    }
};

}  // namespace af

#endif  // AF_AP_AXI_SDATA_H
