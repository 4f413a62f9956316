"""Python execution of FINN HW models (the functional reference of the sim toolchain).

FINN executes its generic HW ops (MVAU, VVAU, Thresholding, ...) in Python, but the
specialised `_hls`/`_rtl` variants need C++ or RTL simulation. The specialised op
carries all of the generic op's attributes, so mapping it back to the generic op
gives the same arithmetic in Python.
"""

import finn_env

GENERIC_DOMAIN = "finn.custom_op.fpgadataflow"


def despecialize(model):
    """A copy of `model` with every `X_hls`/`X_rtl` node turned into generic `X`."""
    from qonnx.core.modelwrapper import ModelWrapper

    m = ModelWrapper(model.model.__deepcopy__())
    for n in m.graph.node:
        for suffix in ("_hls", "_rtl"):
            if n.op_type.endswith(suffix):
                n.op_type = n.op_type[: -len(suffix)]
                n.domain = GENERIC_DOMAIN
    return m


def execute(model, inputs):
    """Run `model` on {input name: array}; returns {output name: array}."""
    from finn.core.onnx_exec import execute_onnx

    ctx = execute_onnx(despecialize(model), inputs, return_full_exec_context=False)
    return {o.name: ctx[o.name] for o in model.graph.output}


def execute_chain(parts, inputs):
    """Run partition models one after another, feeding each the tensors it needs."""
    tensors = dict(inputs)
    for part in parts:
        feed = {i.name: tensors[i.name] for i in part.graph.input}
        tensors.update(execute(part, feed))
    return tensors


finn_env.setup()
