#!/usr/bin/env python3
"""Generate QONNX models for the FINN flow without downloads or torch.

Two networks share one builder:
  * ``mobilenet_v1``: MobileNet-V1 1.0/224, 4-bit weights and activations, the first
    conv with 8-bit weights on the 8-bit input (the finn-examples w4a4 network),
  * ``tiny``: the same block structure at 32x32 with four blocks, for fast tests.

Weights are seeded random values already on their quantisation grid, so the QONNX
graph is exactly what a quantisation-aware export produces, minus the accuracy.
A user's own ONNX file can be passed instead (``--from``): it is checked and copied.

Structure (one block): Conv -> BatchNormalization -> Relu -> Quant(unsigned). The
input is UINT8 NCHW followed by Mul(1/255); the tail is AveragePool -> Trunc(FLOOR)
-> Flatten -> Gemm(8-bit weights, bias on the integer grid) -> TopK.
"""

import argparse
import math
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QONNX_DOMAIN = "qonnx.custom_op.general"

# (depthwise stride, pointwise output channels) of MobileNet-V1's 13 blocks
# (Howard et al. 2017, Table 1).
MOBILENET_BLOCKS = [
    (1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
    (1, 512), (1, 512), (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024),
]
TINY_BLOCKS = [(1, 16), (2, 32), (1, 32), (2, 32)]


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, prefix, value):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), n))
        return n

    def const_int64(self, prefix, value):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.int64), n))
        return n

    def node(self, op, inputs, attrs=None, domain="", n_out=1):
        outs = [self.name(op.lower() + "_out") for _ in range(n_out)]
        self.nodes.append(
            helper.make_node(op, inputs, outs, name=self.name(op), domain=domain, **(attrs or {}))
        )
        return outs[0] if n_out == 1 else outs

    def quant(self, x, scale, bits, signed, narrow):
        return self.node(
            "Quant",
            [x, self.const("scale", scale), self.const("zeropt", 0.0), self.const("bits", float(bits))],
            {"signed": int(signed), "narrow": int(narrow), "rounding_mode": "ROUND"},
            domain=QONNX_DOMAIN,
        )

    def weight(self, shape, bits, per_channel):
        """Random integer weights times a (per output channel) scale, quantised by Quant."""
        qmax = 2 ** (bits - 1) - 1
        w_int = self.rng.integers(-qmax, qmax + 1, size=shape).astype(np.float32)
        if per_channel:
            sshape = [shape[0]] + [1] * (len(shape) - 1)
            scale = self.rng.uniform(0.5, 1.5, size=sshape).astype(np.float32) / qmax
        else:
            scale = np.float32(1.0 / qmax)
        w = self.const("w", w_int * scale)
        return self.quant(w, scale, bits, signed=True, narrow=True), qmax

    def conv_block(self, x, cin, cout, k, stride, group, wbits, abits, in_rms, per_channel_act):
        """Conv + BN + ReLU + unsigned activation Quant; returns (tensor, act rms)."""
        w, qmax = self.weight([cout, cin // group, k, k], wbits, per_channel=True)
        pad = k // 2
        y = self.node(
            "Conv", [x, w],
            {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4,
             "group": group, "dilations": [1, 1]},
        )
        # BN statistics that roughly normalise the conv output, so that the
        # following 4-bit activation neither saturates nor collapses to zero.
        fan_in = (cin // group) * k * k
        conv_std = math.sqrt(fan_in * (qmax * qmax / 3.0) / (qmax * qmax)) * in_rms
        gamma = self.rng.uniform(0.6, 1.4, size=cout)
        beta = self.rng.uniform(-0.3, 0.5, size=cout)
        mean = self.rng.normal(0.0, 0.1 * conv_std, size=cout)
        var = (conv_std * self.rng.uniform(0.8, 1.25, size=cout)) ** 2
        y = self.node(
            "BatchNormalization",
            [y, self.const("bn_g", gamma), self.const("bn_b", beta),
             self.const("bn_m", mean), self.const("bn_v", var)],
            {"epsilon": 1e-5},
        )
        y = self.node("Relu", [y])
        levels = 2 ** abits - 1
        if per_channel_act:
            scale = (self.rng.uniform(2.0, 3.0, size=[1, cout, 1, 1]) / levels).astype(np.float32)
        else:
            scale = np.float32(2.5 / levels)
        return self.quant(y, scale, abits, signed=False, narrow=False), 1.0, scale


def build(res, blocks, first_ch, num_classes, wbits, abits, first_bits, topk, seed, name):
    b = Builder(seed)
    inp = helper.make_tensor_value_info("global_in", TensorProto.FLOAT, [1, 3, res, res])
    x = b.node("Mul", ["global_in", b.const("inv255", np.float32(1.0 / 255.0))])
    x, rms, _ = b.conv_block(x, 3, first_ch, 3, 2, 1, first_bits, abits, 0.5, True)
    cin = first_ch
    last_stage_ch = blocks[-1][1]
    for dw_stride, cout in blocks:
        x, rms, _ = b.conv_block(x, cin, cin, 3, dw_stride, cin, wbits, abits, rms, False)
        # Per-channel scales on pointwise outputs except the last stage, whose
        # per-tensor scale the Trunc after the average pool needs.
        x, rms, act_scale = b.conv_block(
            x, cin, cout, 1, 1, 1, wbits, abits, rms, cout != last_stage_ch
        )
        cin = cout
    spatial = res // 2
    for dw_stride, _ in blocks:
        spatial = (spatial - 1) // dw_stride + 1
    return _tail(b, inp, x, act_scale, cin, spatial, num_classes, abits, topk, name)


def _tail(b, inp, x, act_scale, cin, spatial, num_classes, abits, topk, name):
    """AveragePool over the whole map -> Trunc(FLOOR) -> Flatten -> Gemm -> TopK."""
    k = spatial
    x = b.node("AveragePool", [x], {"kernel_shape": [k, k], "strides": [k, k], "pads": [0] * 4})
    in_bits = abits + math.ceil(math.log2(k * k))
    out_bits = min(8, in_bits)
    in_scale = np.float32(act_scale / (k * k))
    out_scale = np.float32(in_scale * 2 ** (in_bits - out_bits))
    x = b.node(
        "Trunc",
        [x, b.const("t_scale", in_scale), b.const("t_zp", 0.0), b.const("t_inbits", float(in_bits)),
         b.const("t_oscale", out_scale), b.const("t_obits", float(out_bits))],
        {"rounding_mode": "FLOOR", "signed": 0, "narrow": 0},
        domain=QONNX_DOMAIN,
    )
    x = b.node("Flatten", [x], {"axis": 1})
    w, qmax = b.weight([num_classes, cin], 8, per_channel=False)
    w_scale = np.float32(1.0 / qmax)
    bias = b.rng.integers(-2000, 2000, size=num_classes).astype(np.float32) * out_scale * w_scale
    x = b.node("Gemm", [x, w, b.const("fc_b", bias)], {"transB": 1})
    _, idx = b.node("TopK", [x, b.const_int64("k", [topk])], {"axis": -1}, n_out=2)
    out = helper.make_tensor_value_info(idx, TensorProto.INT64, [1, topk])
    graph = helper.make_graph(b.nodes, name, [inp], [out], initializer=b.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid(QONNX_DOMAIN, 2)],
        producer_name="auroraforge-finn-models",
    )
    model.ir_version = 8
    return model


def mobilenet_v1(seed=0, res=224, num_classes=1000):
    return build(res, MOBILENET_BLOCKS, 32, num_classes, 4, 4, 8, 5, seed, "mobilenet_v1_w4a4")


def tiny(seed=0):
    return build(32, TINY_BLOCKS, 8, 10, 4, 4, 8, 3, seed, "tiny_cnn_w4a4")


# resnet_tiny: (output channels, stride) of each residual block. A block whose stride
# or width changes takes a projection shortcut (1x1 conv + BN), the others the identity.
RESNET_TINY_BLOCKS = [(16, 1), (32, 2), (32, 1)]


def _conv_bn(b, x, cin, cout, k, stride, wbits, in_rms):
    """Conv + BatchNormalization whose statistics roughly normalise the conv output."""
    w, qmax = b.weight([cout, cin, k, k], wbits, per_channel=True)
    y = b.node(
        "Conv", [x, w],
        {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [k // 2] * 4,
         "group": 1, "dilations": [1, 1]},
    )
    conv_std = math.sqrt(cin * k * k / 3.0) * in_rms
    gamma = b.rng.uniform(0.6, 1.4, size=cout)
    beta = b.rng.uniform(-0.3, 0.3, size=cout)
    mean = b.rng.normal(0.0, 0.1 * conv_std, size=cout)
    var = (conv_std * b.rng.uniform(0.8, 1.25, size=cout)) ** 2
    return b.node(
        "BatchNormalization",
        [y, b.const("bn_g", gamma), b.const("bn_b", beta), b.const("bn_m", mean),
         b.const("bn_v", var)],
        {"epsilon": 1e-5},
    )


def _shortcut_join(b, x, x_scale, y, cin, cout, stride, bits):
    """The end of a residual block: the shortcut (identity, or a 1x1 projection with its
    stride and BN where the shape changes), both addends quantised signed on the shortcut's
    per-tensor scale, Add, ReLU, Quant(unsigned). Returns (output, its scale)."""
    levels = 2 ** bits - 1
    if stride != 1 or cin != cout:
        add_scale = np.float32(b.rng.uniform(0.25, 0.35))
        short = _conv_bn(b, x, cin, cout, 1, stride, bits, 1.0)
        short = b.quant(short, add_scale, bits, signed=True, narrow=False)
    else:
        add_scale, short = x_scale, x
    y = b.quant(y, add_scale, bits, signed=True, narrow=False)
    y = b.node("Add", [y, short])
    out_scale = np.float32(2.5 / levels)
    return b.quant(b.node("Relu", [y]), out_scale, bits, signed=False, narrow=False), out_scale


def _residual_block(b, x, x_scale, cin, cout, stride, bits):
    """conv3x3-BN-ReLU-Quant, conv3x3-BN-Quant(signed) + shortcut, ReLU, Quant(unsigned).

    Both addends are quantised with the same per-tensor scale (the shortcut's), so the
    residual Add is an integer addition once streamlined, as in FINN's quantised
    ResNet-50 (its Add joins two streams on one scale).
    """
    levels = 2 ** bits - 1
    # Per-tensor: a per-channel scale before a full convolution cannot move past it in
    # streamlining (only a depthwise one can), and would stay a float Mul.
    mid_scale = np.float32(b.rng.uniform(2.0, 3.0) / levels)
    y = _conv_bn(b, x, cin, cout, 3, stride, bits, 1.0)
    y = b.quant(b.node("Relu", [y]), mid_scale, bits, signed=False, narrow=False)
    y = _conv_bn(b, y, cout, cout, 3, 1, bits, 1.0)
    return _shortcut_join(b, x, x_scale, y, cin, cout, stride, bits)


def resnet_tiny(seed=0, res=32, num_classes=10, bits=4, topk=3):
    """A small ResNet: stem conv, the blocks of RESNET_TINY_BLOCKS, global average pool,
    FC and TopK; w4a4 with an 8-bit stem on the UINT8 input."""
    b = Builder(seed)
    inp = helper.make_tensor_value_info("global_in", TensorProto.FLOAT, [1, 3, res, res])
    x = b.node("Mul", ["global_in", b.const("inv255", np.float32(1.0 / 255.0))])
    x, _, x_scale = b.conv_block(x, 3, RESNET_TINY_BLOCKS[0][0], 3, 2, 1, 8, bits, 0.5, False)
    cin, spatial = RESNET_TINY_BLOCKS[0][0], res // 2
    for cout, stride in RESNET_TINY_BLOCKS:
        x, x_scale = _residual_block(b, x, x_scale, cin, cout, stride, bits)
        cin, spatial = cout, (spatial - 1) // stride + 1
    return _tail(b, inp, x, x_scale, cin, spatial, num_classes, bits, topk, "resnet_tiny_w4a4")


# ResNet-50 (He et al. 2016, Table 1, "50-layer"): (bottleneck width, blocks, stride of
# the stage's first block) of conv2_x .. conv5_x; each block's output is 4x its width.
RESNET50_STAGES = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]


def _bottleneck(b, x, x_scale, cin, width, stride, bits):
    """1x1-BN-ReLU-Quant, 3x3(stride)-BN-ReLU-Quant, 1x1-BN-Quant(signed) + shortcut, ReLU,
    Quant(unsigned). The stride sits on the 3x3 conv (torchvision's ResNet-50 "v1.5", as
    finn-examples' ResNet-50 is derived from). A stage's first block changes the width (and
    all but the first the resolution), so it takes a projection shortcut (1x1 conv, stride,
    BN); both addends share the shortcut's per-tensor scale, as in ``_residual_block``.
    """
    levels = 2 ** bits - 1
    cout = 4 * width
    y = _conv_bn(b, x, cin, width, 1, 1, bits, 1.0)
    y = b.quant(b.node("Relu", [y]), np.float32(b.rng.uniform(2.0, 3.0) / levels), bits,
                signed=False, narrow=False)
    y = _conv_bn(b, y, width, width, 3, stride, bits, 1.0)
    y = b.quant(b.node("Relu", [y]), np.float32(b.rng.uniform(2.0, 3.0) / levels), bits,
                signed=False, narrow=False)
    y = _conv_bn(b, y, width, cout, 1, 1, bits, 1.0)
    return _shortcut_join(b, x, x_scale, y, cin, cout, stride, bits)


def resnet50(seed=0, res=224, num_classes=1000, bits=4, topk=5):
    """ResNet-50: 7x7/2 stem conv (8-bit weights on the UINT8 input), 3x3/2 max pool, the 16
    bottlenecks of RESNET50_STAGES, global average pool, FC (8-bit weights), TopK; w4a4
    elsewhere (the reasons against finn-examples' w1a2 are in finn/README.md)."""
    b = Builder(seed)
    inp = helper.make_tensor_value_info("global_in", TensorProto.FLOAT, [1, 3, res, res])
    x = b.node("Mul", ["global_in", b.const("inv255", np.float32(1.0 / 255.0))])
    x, _, x_scale = b.conv_block(x, 3, 64, 7, 2, 1, 8, bits, 0.5, False)
    # max pool on the quantised activation: it commutes with the thresholds, so FINN's
    # streamlining leaves an integer max pool (padding 1 pads with 0, the activation's minimum)
    x = b.node("MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4})
    cin, spatial = 64, (res // 2 - 1) // 2 + 1
    for width, blocks, stride in RESNET50_STAGES:
        for i in range(blocks):
            s = stride if i == 0 else 1
            x, x_scale = _bottleneck(b, x, x_scale, cin, width, s, bits)
            cin, spatial = 4 * width, (spatial - 1) // s + 1
    return _tail(b, inp, x, x_scale, cin, spatial, num_classes, bits, topk, "resnet50_w4a4")


NETS = {"mobilenet_v1": mobilenet_v1, "tiny": tiny, "resnet_tiny": resnet_tiny,
        "resnet50": resnet50}

def finalize(model):
    """Annotate the UINT8 input and tidy the graph as a QONNX export would be."""
    from qonnx.core.datatype import DataType
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.util.cleanup import cleanup_model

    mw = ModelWrapper(model)
    mw.set_tensor_datatype(mw.graph.input[0].name, DataType["UINT8"])
    mw = cleanup_model(mw)
    return mw


def load_user_model(path):
    """Check that a user-supplied ONNX file parses and is a valid graph."""
    try:
        model = onnx.load(path)
        onnx.checker.check_model(model)
    except Exception as e:  # onnx raises several unrelated exception types
        raise SystemExit(f"error: {path}: not a valid ONNX model: {e}") from None
    if len(model.graph.input) != 1 or len(model.graph.output) != 1:
        raise SystemExit(f"error: {path}: FINN needs exactly one graph input and one output")
    from qonnx.core.modelwrapper import ModelWrapper

    return ModelWrapper(model)


def save_atomic(mw, out):
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".onnx.tmp")
    os.close(fd)
    try:
        mw.save(tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net", choices=sorted(NETS), default="mobilenet_v1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from", dest="user", help="use this ONNX file instead of generating one")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.user:
        mw = load_user_model(a.user)
    else:
        model = NETS[a.net](a.seed)
        onnx.checker.check_model(model)
        mw = finalize(model)
    save_atomic(mw, a.out)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
