#!/usr/bin/python3
"""Writes the whole-model tests' ONNX models, inputs and numpy reference outputs.

Usage: make_test_models.py DIR

Two models, opset 17, random weights as initializers (seeded: the same files each run):
  cnn.onnx      x float32[1,3,32,32] -> y float32[1,10]:
                Conv(3->8, 3x3, pad 1), BatchNormalization, Relu, MaxPool 2x2, Conv(8->16, 3x3,
                pad 1), Relu, GlobalAveragePool, Flatten, Gemm(16->10)
  encoder.onnx  hidden float32[1,16,64] -> encoded float32[1,16,64]: a transformer encoder
                block: Q/K/V projections, 4 heads, softmax(QK^T / sqrt(d)) V, output projection,
                residual, LayerNormalization, MLP with the Erf form of GELU, residual
and for each NAME: NAME_input.npy and NAME_expected.npy, the output computed by numpy in
float64 from the float32 weights and input (the reference the test compares Temper with).
Needs Debian's python3-onnx and python3-numpy (/usr/bin/python3).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20240605)


def weight(shape, fan_in):
    return (rng.standard_normal(shape) / math.sqrt(fan_in)).astype(np.float32)


def save_model(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="temper-tests")
    onnx.checker.check_model(model)
    onnx.save(model, path)


def conv2d_ref(x, w, b, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out + b.reshape(1, k, 1, 1)


def cnn(out_dir):
    p = {
        "w1": weight((8, 3, 3, 3), 27), "b1": weight((8,), 8),
        "gamma": (1 + 0.1 * rng.standard_normal(8)).astype(np.float32), "beta": weight((8,), 8),
        "mean": (0.1 * rng.standard_normal(8)).astype(np.float32),
        "var": (0.5 + rng.random(8)).astype(np.float32),
        "w2": weight((16, 8, 3, 3), 72), "b2": weight((16,), 16),
        "wfc": weight((10, 16), 16), "bfc": weight((10,), 10),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "wfc", "bfc"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in p.items()])
    save_model(graph, os.path.join(out_dir, "cnn.onnx"))

    x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
    q = {k: v.astype(np.float64) for k, v in p.items()}
    c1 = conv2d_ref(x.astype(np.float64), q["w1"], q["b1"], 1)
    bn = (c1 - q["mean"].reshape(1, 8, 1, 1)) / np.sqrt(q["var"].reshape(1, 8, 1, 1) + 1e-5)
    bn = bn * q["gamma"].reshape(1, 8, 1, 1) + q["beta"].reshape(1, 8, 1, 1)
    r1 = np.maximum(bn, 0)
    p1 = r1.reshape(1, 8, 16, 2, 16, 2).max(axis=(3, 5))
    r2 = np.maximum(conv2d_ref(p1, q["w2"], q["b2"], 1), 0)
    y = r2.mean(axis=(2, 3)) @ q["wfc"].T + q["bfc"]
    np.save(os.path.join(out_dir, "cnn_input.npy"), x)
    np.save(os.path.join(out_dir, "cnn_expected.npy"), y)


def encoder(out_dir):
    seq, dim, heads, hidden = 16, 64, 4, 256
    head_dim = dim // heads
    p = {
        "wq": weight((dim, dim), dim), "bq": weight((dim,), dim),
        "wk": weight((dim, dim), dim), "bk": weight((dim,), dim),
        "wv": weight((dim, dim), dim), "bv": weight((dim,), dim),
        "wo": weight((dim, dim), dim), "bo": weight((dim,), dim),
        "ln_scale": (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32), "ln_bias": weight((dim,), dim),
        "w1": weight((dim, hidden), dim), "b1": weight((hidden,), hidden),
        "w2": weight((hidden, dim), hidden), "b2": weight((dim,), dim),
    }
    consts = {
        "heads_shape": np.array([1, seq, heads, head_dim], dtype=np.int64),
        "model_shape": np.array([1, seq, dim], dtype=np.int64),
        "sqrt_d": np.array(math.sqrt(head_dim), dtype=np.float32),
        "sqrt_2": np.array(math.sqrt(2), dtype=np.float32),
        "half": np.array(0.5, dtype=np.float32),
        "one": np.array(1.0, dtype=np.float32),
    }
    nodes = []
    for name in "qkv":
        nodes += [
            helper.make_node("MatMul", ["hidden", "w" + name], [name + "_mm"]),
            helper.make_node("Add", [name + "_mm", "b" + name], [name + "_proj"]),
            helper.make_node("Reshape", [name + "_proj", "heads_shape"], [name + "_heads"]),
            # Q and V as [1, heads, seq, head_dim]; K transposed to [1, heads, head_dim, seq].
            helper.make_node("Transpose", [name + "_heads"], [name + "_t"],
                             perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["q_t", "k_t"], ["scores"]),
        helper.make_node("Div", ["scores", "sqrt_d"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", "v_t"], ["context"]),
        helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "model_shape"], ["merged"]),
        helper.make_node("MatMul", ["merged", "wo"], ["o_mm"]),
        helper.make_node("Add", ["o_mm", "bo"], ["o_proj"]),
        helper.make_node("Add", ["o_proj", "hidden"], ["residual1"]),
        helper.make_node("LayerNormalization", ["residual1", "ln_scale", "ln_bias"], ["normed"], axis=-1,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["normed", "w1"], ["fc1_mm"]),
        helper.make_node("Add", ["fc1_mm", "b1"], ["fc1"]),
        helper.make_node("Div", ["fc1", "sqrt_2"], ["gelu_scaled"]),
        helper.make_node("Erf", ["gelu_scaled"], ["gelu_erf"]),
        helper.make_node("Add", ["gelu_erf", "one"], ["gelu_shifted"]),
        helper.make_node("Mul", ["fc1", "gelu_shifted"], ["gelu_prod"]),
        helper.make_node("Mul", ["gelu_prod", "half"], ["gelu"]),
        helper.make_node("MatMul", ["gelu", "w2"], ["fc2_mm"]),
        helper.make_node("Add", ["fc2_mm", "b2"], ["fc2"]),
        helper.make_node("Add", ["fc2", "normed"], ["encoded"]),
    ]
    graph = helper.make_graph(
        nodes, "encoder", [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, seq, dim])],
        [helper.make_tensor_value_info("encoded", TensorProto.FLOAT, [1, seq, dim])],
        [numpy_helper.from_array(v, k) for k, v in {**p, **consts}.items()])
    save_model(graph, os.path.join(out_dir, "encoder.onnx"))

    x = rng.standard_normal((1, seq, dim)).astype(np.float32)
    q = {k: v.astype(np.float64) for k, v in p.items()}
    h = x.astype(np.float64)

    def split_heads(t):  # [1, seq, dim] -> [1, heads, seq, head_dim]
        return t.reshape(1, seq, heads, head_dim).transpose(0, 2, 1, 3)

    qh, kh, vh = (split_heads(h @ q["w" + n] + q["b" + n]) for n in "qkv")
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(head_dim)
    attn = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attn /= attn.sum(axis=-1, keepdims=True)
    merged = (attn @ vh).transpose(0, 2, 1, 3).reshape(1, seq, dim)
    r1 = merged @ q["wo"] + q["bo"] + h
    mu = r1.mean(axis=-1, keepdims=True)
    var = ((r1 - mu) ** 2).mean(axis=-1, keepdims=True)
    normed = (r1 - mu) / np.sqrt(var + 1e-5) * q["ln_scale"] + q["ln_bias"]
    fc1 = normed @ q["w1"] + q["b1"]
    gelu = fc1 * 0.5 * (1 + np.vectorize(math.erf)(fc1 / math.sqrt(2)))
    encoded = gelu @ q["w2"] + q["b2"] + normed
    np.save(os.path.join(out_dir, "encoder_input.npy"), x)
    np.save(os.path.join(out_dir, "encoder_expected.npy"), encoded)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    cnn(sys.argv[1])
    encoder(sys.argv[1])
