//! Small graphs written here in the export format, checked against a direct
//! (non-im2col) convolution and the ONNX TopK tie rule. The bit-exactness against FINN
//! itself is the graph test `//finn/tiny:exec_bitexact`.

use std::fs;
use std::path::Path;

use finn_exec::frames::Rng;
use finn_exec::{DataType, Partition, Tensor};
use serde_json::json;

fn write_f32(dir: &Path, file: &str, vals: &[f32]) {
    fs::create_dir_all(dir.join("tensors")).unwrap();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    fs::write(dir.join(file), bytes).unwrap();
}

/// FMPadding(1) -> SWG 3x3 stride s -> MVAU (no activation) -> Thresholding, 2 -> 4 channels.
fn conv_graph(dir: &Path, h: usize, stride: usize, w: &[f32], thr: &[f32]) {
    let (ci, co, k) = (2usize, 4usize, 3usize);
    let hp = h + 2;
    let oh = (hp - k) / stride + 1;
    write_f32(dir, "tensors/w.f32", w);
    write_f32(dir, "tensors/t.f32", thr);
    let g = json!({
        "format": "auroraforge-finn-exec/1",
        "name": "conv",
        "inputs": ["x"], "outputs": ["y"],
        "tensors": {
            "x": {"shape": [1, h, h, ci], "dtype": "UINT4"},
            "p": {"shape": [1, hp, hp, ci], "dtype": "UINT4"},
            "c": {"shape": [1, oh, oh, k * k * ci], "dtype": "UINT4"},
            "m": {"shape": [1, oh, oh, co], "dtype": "INT12"},
            "y": {"shape": [1, oh, oh, co], "dtype": "UINT2"}
        },
        "initializers": {
            "w": {"shape": [k * k * ci, co], "file": "tensors/w.f32", "dtype": "INT4"},
            "t": {"shape": [co, 3], "file": "tensors/t.f32", "dtype": "INT12"}
        },
        "nodes": [
            {"name": "pad", "op_type": "FMPadding", "inputs": ["x"], "outputs": ["p"],
             "attrs": {"Padding": [1, 1, 1, 1]}},
            {"name": "swg", "op_type": "ConvolutionInputGenerator", "inputs": ["p"], "outputs": ["c"],
             "attrs": {"IFMDim": [hp, hp], "ConvKernelDim": [k, k], "Stride": [stride, stride],
                       "Dilation": [1, 1], "IFMChannels": ci}},
            {"name": "mvau", "op_type": "MVAU", "inputs": ["c", "w"], "outputs": ["m"],
             "attrs": {"MW": k * k * ci, "MH": co, "inputDataType": "UINT4", "weightDataType": "INT4",
                       "outputDataType": "INT12", "noActivation": 1, "ActVal": 0, "binaryXnorMode": 0}},
            {"name": "thr", "op_type": "Thresholding", "inputs": ["m", "t"], "outputs": ["y"],
             "attrs": {"ActVal": 0, "outputDataType": "UINT2"}}
        ]
    });
    fs::write(dir.join("graph.json"), serde_json::to_string(&g).unwrap()).unwrap();
}

#[test]
fn conv_chain_equals_direct_convolution() {
    let (h, ci, co, k) = (7usize, 2usize, 4usize, 3usize);
    let mut rng = Rng::new(7);
    let w: Vec<f32> = (0..k * k * ci * co)
        .map(|_| rng.value(DataType::parse("INT4").unwrap()) as f32)
        .collect();
    // Unsorted and fractional thresholds: FINN counts every threshold x >= t.
    let thr: Vec<f32> = (0..co)
        .flat_map(|c| [-3.5 + c as f32, 10.0, 2.25])
        .collect();
    for stride in [1, 2] {
        let d = tempfile::tempdir().unwrap();
        conv_graph(d.path(), h, stride, &w, &thr);
        let p = Partition::load(d.path()).unwrap();
        let x: Vec<i32> = (0..h * h * ci)
            .map(|_| rng.value(DataType::parse("UINT4").unwrap()))
            .collect();
        let got = p
            .run(&[Tensor::new(vec![1, h, h, ci], x.clone())])
            .unwrap()
            .remove(0);
        let oh = (h + 2 - k) / stride + 1;
        let mut want = Vec::new();
        for oy in 0..oh {
            for ox in 0..oh {
                for o in 0..co {
                    let mut acc = 0i64;
                    for ky in 0..k {
                        for kx in 0..k {
                            let (iy, ix) =
                                ((oy * stride + ky) as i64 - 1, (ox * stride + kx) as i64 - 1);
                            if iy < 0 || ix < 0 || iy >= h as i64 || ix >= h as i64 {
                                continue;
                            }
                            for c in 0..ci {
                                let xv = x[((iy as usize) * h + ix as usize) * ci + c] as i64;
                                // FINN's weight matrix rows are (ky, kx, c).
                                let wv = w[((ky * k + kx) * ci + c) * co + o] as i64;
                                acc += xv * wv;
                            }
                        }
                    }
                    let count = thr[o * 3..o * 3 + 3]
                        .iter()
                        .filter(|&&t| acc as f32 >= t)
                        .count();
                    want.push(count as i32);
                }
            }
        }
        assert_eq!(got.shape, vec![1, oh, oh, co]);
        assert_eq!(got.data, want, "stride {stride}");
    }
}

#[test]
fn label_select_keeps_lower_index_on_ties() {
    let d = tempfile::tempdir().unwrap();
    let g = json!({
        "format": "auroraforge-finn-exec/1", "inputs": ["x"], "outputs": ["y"],
        "tensors": {"x": {"shape": [1, 6], "dtype": "INT8"}, "y": {"shape": [1, 3], "dtype": "UINT8"}},
        "initializers": {},
        "nodes": [{"name": "ls", "op_type": "LabelSelect", "inputs": ["x"], "outputs": ["y"], "attrs": {"K": 3}}]
    });
    fs::write(d.path().join("graph.json"), g.to_string()).unwrap();
    let p = Partition::load(d.path()).unwrap();
    let y = p.run_frame(&[5, 9, 5, 9, -1, 5]).unwrap();
    assert_eq!(y, vec![1, 3, 0]);
}

#[test]
fn bad_inputs_are_named() {
    let d = tempfile::tempdir().unwrap();
    conv_graph(d.path(), 5, 1, &[0.0; 72], &[0.0; 12]);
    let p = Partition::load(d.path()).unwrap();
    let e = p.run_frame(&[1, 2, 3]).unwrap_err().to_string();
    assert!(e.contains("input x: 3 values given"), "{e}");
    let e = format!("{:#}", p.run_frame(&[16; 50]).unwrap_err());
    assert!(
        e.contains("value 16") && e.contains("outside its datatype"),
        "{e}"
    );
    fs::write(d.path().join("graph.json"), "{}").unwrap();
    let e = format!("{:#}", Partition::load(d.path()).err().unwrap());
    assert!(e.contains("graph.json: not an executor graph"), "{e}");
}

#[test]
fn unsupported_op_is_refused_at_load() {
    let d = tempfile::tempdir().unwrap();
    let g = json!({
        "format": "auroraforge-finn-exec/1", "inputs": ["x"], "outputs": ["y"],
        "tensors": {"x": {"shape": [1, 4], "dtype": "INT8"}, "y": {"shape": [1, 4], "dtype": "INT8"}},
        "initializers": {},
        "nodes": [{"name": "ln", "op_type": "LayerNorm", "inputs": ["x"], "outputs": ["y"], "attrs": {}}]
    });
    fs::write(d.path().join("graph.json"), g.to_string()).unwrap();
    let e = format!("{:#}", Partition::load(d.path()).err().unwrap());
    assert!(
        e.contains("node ln: op type LayerNorm is not supported"),
        "{e}"
    );
}

/// A residual block's shape in miniature: DuplicateStreams forks x into three streams, one
/// goes through Thresholding (x >= 8: the "main branch"), and two ElementwiseAdds join them
/// again: y = (x >= 8) + x + x, computed here directly.
fn fork_join_graph(dir: &Path, copies: i64) {
    write_f32(dir, "tensors/t.f32", &[8.0, 8.0]);
    let elementwise = |name: &str, l: &str, r: &str, out: &str| {
        json!({"name": name, "op_type": "ElementwiseAdd", "inputs": [l, r], "outputs": [out],
               "attrs": {"lhs_dtype": "UINT4", "rhs_dtype": "UINT4", "lhs_shape": [1, 2, 2, 2],
                         "rhs_shape": [1, 2, 2, 2], "out_shape": [1, 2, 2, 2]}})
    };
    let g = json!({
        "format": "auroraforge-finn-exec/1", "inputs": ["x"], "outputs": ["y"],
        "tensors": {
            "x": {"shape": [1, 2, 2, 2], "dtype": "UINT4"},
            "a": {"shape": [1, 2, 2, 2], "dtype": "UINT4"},
            "b": {"shape": [1, 2, 2, 2], "dtype": "UINT4"},
            "c": {"shape": [1, 2, 2, 2], "dtype": "UINT4"},
            "t": {"shape": [1, 2, 2, 2], "dtype": "UINT1"},
            "s": {"shape": [1, 2, 2, 2], "dtype": "UINT5"},
            "y": {"shape": [1, 2, 2, 2], "dtype": "UINT6"}
        },
        "initializers": {"th": {"shape": [2, 1], "file": "tensors/t.f32", "dtype": "UINT4"}},
        "nodes": [
            {"name": "dup", "op_type": "DuplicateStreams", "inputs": ["x"], "outputs": ["a", "b", "c"],
             "attrs": {"NumChannels": 2, "numInputVectors": [1, 2, 2], "NumOutputStreams": copies}},
            {"name": "thr", "op_type": "Thresholding", "inputs": ["a", "th"], "outputs": ["t"],
             "attrs": {"ActVal": 0, "outputDataType": "UINT1"}},
            elementwise("add0", "t", "b", "s"),
            elementwise("add1", "s", "c", "y")
        ]
    });
    fs::write(dir.join("graph.json"), g.to_string()).unwrap();
}

#[test]
fn duplicate_streams_fork_and_join_again() {
    let d = tempfile::tempdir().unwrap();
    fork_join_graph(d.path(), 3);
    let p = Partition::load(d.path()).unwrap();
    assert!(p.op_types().iter().any(|t| t == "DuplicateStreams"));
    let x: Vec<i64> = vec![0, 7, 8, 15, 3, 12, 9, 1];
    let want: Vec<i64> = x.iter().map(|&v| (v >= 8) as i64 + 2 * v).collect();
    assert_eq!(p.run_frame(&x).unwrap(), want);
}

#[test]
fn duplicate_streams_with_the_wrong_stream_count_is_refused() {
    let d = tempfile::tempdir().unwrap();
    fork_join_graph(d.path(), 2);
    let e = format!("{:#}", Partition::load(d.path()).err().unwrap());
    assert!(
        e.contains("node dup: NumOutputStreams is 2, the node has 3 outputs"),
        "{e}"
    );
}

/// ResNet-50's stem max pool as FINN lowers it (`InferPool`): FMPadding(1) -> a 3x3 stride-2
/// window generator -> Pool(MaxPool), on unsigned activations. Checked against a direct
/// 3x3/2 max pool with padding 1 that skips the padded positions (PyTorch's `MaxPool2d(3, 2,
/// 1)`, which pads with -inf): for values >= 0 FINN's zero padding gives the same maxima.
#[test]
fn stem_max_pool_equals_direct_max_pool() {
    let (h, ch, k, s) = (9usize, 3usize, 3usize, 2usize);
    let hp = h + 2;
    let oh = (hp - k) / s + 1;
    let d = tempfile::tempdir().unwrap();
    let g = json!({
        "format": "auroraforge-finn-exec/1", "inputs": ["x"], "outputs": ["y"],
        "tensors": {
            "x": {"shape": [1, h, h, ch], "dtype": "UINT4"},
            "p": {"shape": [1, hp, hp, ch], "dtype": "UINT4"},
            "w": {"shape": [1, oh, oh, k * k * ch], "dtype": "UINT4"},
            "y": {"shape": [1, oh, oh, ch], "dtype": "UINT4"}
        },
        "initializers": {},
        "nodes": [
            {"name": "pad", "op_type": "FMPadding", "inputs": ["x"], "outputs": ["p"],
             "attrs": {"Padding": [1, 1, 1, 1]}},
            {"name": "swg", "op_type": "ConvolutionInputGenerator", "inputs": ["p"], "outputs": ["w"],
             "attrs": {"IFMDim": [hp, hp], "ConvKernelDim": [k, k], "Stride": [s, s],
                       "Dilation": [1, 1], "IFMChannels": ch, "depthwise": 1}},
            {"name": "pool", "op_type": "Pool", "inputs": ["w"], "outputs": ["y"],
             "attrs": {"Channels": ch, "KernelSize": [k, k], "Function": "MaxPool",
                       "InputDataType": "UINT4", "OutputDataType": "UINT4"}}
        ]
    });
    fs::write(d.path().join("graph.json"), g.to_string()).unwrap();
    let p = Partition::load(d.path()).unwrap();
    let mut rng = Rng::new(11);
    let x: Vec<i32> = (0..h * h * ch)
        .map(|_| rng.value(DataType::parse("UINT4").unwrap()))
        .collect();
    let got = p
        .run(&[Tensor::new(vec![1, h, h, ch], x.clone())])
        .unwrap()
        .remove(0);
    let mut want = Vec::new();
    for oy in 0..oh {
        for ox in 0..oh {
            for c in 0..ch {
                let mut m = i32::MIN;
                for ky in 0..k {
                    for kx in 0..k {
                        let (iy, ix) = ((oy * s + ky) as i64 - 1, (ox * s + kx) as i64 - 1);
                        if iy < 0 || ix < 0 || iy >= h as i64 || ix >= h as i64 {
                            continue;
                        }
                        m = m.max(x[((iy as usize) * h + ix as usize) * ch + c]);
                    }
                }
                want.push(m);
            }
        }
    }
    assert_eq!(got.shape, vec![1, oh, oh, ch]);
    assert_eq!(got.data, want);
}
