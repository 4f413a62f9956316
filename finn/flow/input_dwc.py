"""FINN's data-width converter at the input of a partition that receives a cut.

A cut crosses the link at its producer's width (the plan's `stream_bits`: the sending
partition's stitched m_axis). Where the consuming layer takes another width, finn-plus
1.6.1's InsertDWC (finn/transformation/fpgadataflow/insert_dwc.py) puts a
StreamingDataWidthConverter on that edge of the unpartitioned model; here it becomes the
first node of the receiving partition, built the way InsertDWC builds it, so the partition's
s_axis is the cut's width and the converter re-packs FINN's values bit by bit (the link's
AXI4-Stream converters move whole bytes, which is the same only for byte-wide words).

    dwc = input_dwc.widths(model, cut_bits)   # (inWidth, outWidth) or None
    model = input_dwc.insert(model, cut_bits) # the partition with the converter first
"""


def _first(model):
    from qonnx.custom_op.registry import getCustomOp

    (inp,) = [i.name for i in model.graph.input]
    node = model.find_consumer(inp)
    return inp, node, getCustomOp(node)


def consumer_widths(inst, cut_bits):
    """(inWidth, outWidth) of the converter in front of the layer `inst` (a FINN HW op) fed
    `cut_bits`-wide words, or None when it takes that width itself."""
    out_w = int(inst.get_instream_width())
    return None if out_w == int(cut_bits) else (int(cut_bits), out_w)


def widths(model, cut_bits):
    """`consumer_widths` of the model's first node."""
    return consumer_widths(_first(model)[2], cut_bits)


def insert(model, cut_bits):
    """The model with that converter as its first node (unchanged when none is needed)."""
    from onnx import helper as oh

    w = widths(model, cut_bits)
    if w is None:
        return model
    inp, first, inst = _first(model)
    shape = inst.get_normal_input_shape()
    dtype = inst.get_input_datatype()
    tensor = model.get_tensor_valueinfo(inp).type.tensor_type.elem_type
    out = oh.make_tensor_value_info(model.make_new_valueinfo_name(), tensor, shape)
    model.graph.value_info.append(out)
    model.set_tensor_datatype(out.name, dtype)
    dwc = oh.make_node(
        "StreamingDataWidthConverter",
        [inp],
        [out.name],
        domain="finn.custom_op.fpgadataflow",
        backend="fpgadataflow",
        inShape=shape,
        outShape=shape,
        inWidth=w[0],
        outWidth=w[1],
        dataType=str(dtype.name),
        name=f"StreamingDataWidthConverter_{first.name}_in",
    )
    for i, name in enumerate(first.input):
        if name == inp:
            first.input[i] = out.name
    model.graph.node.insert(0, dwc)
    return model


def cut_into(plan, device):
    """The plan's cut received by `device` (a plan or its device slice), or None."""
    cuts = [c for c in plan.get("cuts", []) if c["to_device"] == device]
    if len(cuts) > 1:
        raise ValueError(f"device {device} receives {len(cuts)} cuts; a FINN CU takes one")
    return cuts[0] if cuts else None
