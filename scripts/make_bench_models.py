#!/usr/bin/python3
"""Writes the end-to-end benchmark's ONNX models (benchmarks/model_e2e.cpp).

Usage: make_bench_models.py DIR [--size N] [--layers L] [--seq S]

Opset 13, random weights as initializers (seeded: the same files each run):
  resnet.onnx   input float32[1,3,N,N] -> logits float32[1,1000] (N = --size, default 224):
                ResNet-18: Conv 7x7/2 + BatchNormalization + Relu, MaxPool 3x3/2, four stages of
                two basic blocks (Conv 3x3 + BN + Relu, Conv 3x3 + BN, residual Add, Relu; the
                first block of stages 2-4 strides by 2 and its shortcut is Conv 1x1/2 + BN),
                GlobalAveragePool, Flatten, Gemm to 1000
  encoder.onnx  hidden float32[1,S,768] -> encoded float32[1,S,768] (S = --seq, default 128):
                L BERT-base encoder layers (--layers, default 1), as PyTorch exports them:
                MatMul by 2-D weights + Add bias, Reshape/Transpose to 12 heads, Q divided
                by sqrt(64), batched MatMul Q K^T, Softmax, MatMul by V, Transpose/Reshape back,
                output projection, residual Add, layer norm written out (ReduceMean, Sub, Pow,
                ReduceMean, Add eps, Sqrt, Div; then Mul gamma, Add beta on a [S,768] view,
                Reshape back: OpenCV 4.6 cannot broadcast gamma over [1,S,768]), FFN 3072 with
                the Erf form of GELU, residual Add, layer norm
Needs Debian's python3-onnx and python3-numpy (/usr/bin/python3).
"""
import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
rng = np.random.default_rng(20240611)


def weight(shape, fan_in):
    return (rng.standard_normal(shape) / math.sqrt(fan_in)).astype(np.float32)


def save_model(nodes, name, inputs, outputs, initializers, path):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="temper-bench")
    onnx.checker.check_model(model)
    onnx.save(model, path)


class Builder:
    """Nodes and initializers, with fresh value names."""

    def __init__(self):
        self.nodes = []
        self.init = {}

    def const(self, name, array):
        self.init[name] = array
        return name

    def node(self, op, inputs, out, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out


def resnet(out_dir, size):
    b = Builder()

    def conv_bn(x, name, cin, cout, k, stride, relu):
        w = b.const(name + ".w", weight((cout, cin, k, k), cin * k * k))
        pad = k // 2
        c = b.node("Conv", [x, w], name + ".conv", kernel_shape=[k, k], strides=[stride, stride],
                   pads=[pad] * 4)
        bn = [b.const(name + ".gamma", (1 + 0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.const(name + ".beta", (0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.const(name + ".mean", (0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.const(name + ".var", (0.5 + rng.random(cout)).astype(np.float32))]
        y = b.node("BatchNormalization", [c] + bn, name + ".bn", epsilon=1e-5)
        return b.node("Relu", [y], name + ".relu") if relu else y

    def basic_block(x, name, cin, cout, stride):
        y = conv_bn(x, name + ".conv1", cin, cout, 3, stride, relu=True)
        y = conv_bn(y, name + ".conv2", cout, cout, 3, 1, relu=False)
        shortcut = conv_bn(x, name + ".down", cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else x
        s = b.node("Add", [y, shortcut], name + ".add")
        return b.node("Relu", [s], name + ".out")

    x = conv_bn("input", "stem", 3, 64, 7, 2, relu=True)
    x = b.node("MaxPool", [x], "stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512], start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            x = basic_block(x, f"layer{stage}.{block}", cin, cout, stride)
            cin = cout
    x = b.node("GlobalAveragePool", [x], "pool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    fc_w = b.const("fc.w", weight((1000, 512), 512))
    fc_b = b.const("fc.b", weight((1000,), 1000))
    b.nodes.append(helper.make_node("Gemm", [x, fc_w, fc_b], ["logits"], name="fc", transB=1))
    save_model(b.nodes, "resnet18", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
               [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], b.init,
               os.path.join(out_dir, "resnet.onnx"))


def encoder(out_dir, layers, seq):
    dim, heads, ffn = 768, 12, 3072
    head_dim = dim // heads
    b = Builder()
    heads_shape = b.const("heads_shape", np.array([1, seq, heads, head_dim], dtype=np.int64))
    model_shape = b.const("model_shape", np.array([1, seq, dim], dtype=np.int64))
    rows_shape = b.const("rows_shape", np.array([seq, dim], dtype=np.int64))
    sqrt_d = b.const("sqrt_d", np.array(math.sqrt(head_dim), dtype=np.float32))
    sqrt_2 = b.const("sqrt_2", np.array(1.41421, dtype=np.float32))
    half = b.const("half", np.array(0.5, dtype=np.float32))
    one = b.const("one", np.array(1.0, dtype=np.float32))
    two = b.const("two", np.array(2.0, dtype=np.float32))
    eps = b.const("eps", np.array(1e-12, dtype=np.float32))

    def linear(x, name, cin, cout):
        w = b.const(name + ".w", weight((cin, cout), cin))
        bias = b.const(name + ".b", weight((cout,), cout))
        return b.node("Add", [b.node("MatMul", [x, w], name + ".mm"), bias], name)

    # The scale and shift act on a [seq, 768] view of the normalised rows: OpenCV 4.6
    # turns a Mul or Sub by a smaller operand into its Scale layer, which broadcasts along
    # the run of axes from axis 1 whose extents multiply to the operand's size, so gamma
    # [768] fails on [1, seq, 768] and the statistics [seq, 1] fail on [seq, 768].
    def layer_norm(x, name, out=None):
        gamma = b.const(name + ".gamma", (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32))
        beta = b.const(name + ".beta", (0.1 * rng.standard_normal(dim)).astype(np.float32))
        mean = b.node("ReduceMean", [x], name + ".mean", axes=[-1], keepdims=1)
        centred = b.node("Sub", [x, mean], name + ".centred")
        square = b.node("Pow", [centred, two], name + ".square")
        var = b.node("ReduceMean", [square], name + ".var", axes=[-1], keepdims=1)
        std = b.node("Sqrt", [b.node("Add", [var, eps], name + ".var_eps")], name + ".std")
        normed = b.node("Div", [centred, std], name + ".normed")
        rows = b.node("Reshape", [normed, rows_shape], name + ".rows")
        y = b.node("Add", [b.node("Mul", [rows, gamma], name + ".scaled"), beta], name + ".affine")
        return b.node("Reshape", [y, model_shape], out or name)

    x = "hidden"
    for layer in range(layers):
        p = f"layer{layer}"
        split = {}
        for n in "qkv":
            proj = linear(x, f"{p}.{n}", dim, dim)
            r = b.node("Reshape", [proj, heads_shape], f"{p}.{n}.heads")
            # Q and V as [1, heads, seq, head_dim]; K transposed to [1, heads, head_dim, seq].
            split[n] = b.node("Transpose", [r], f"{p}.{n}.t", perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3])
        # Q is divided by sqrt(d) before Q K^T (as torch's scaled_dot_product_attention
        # exports it): OpenCV 4.6 drops a Div of the batched MatMul's output.
        q = b.node("Div", [split["q"], sqrt_d], f"{p}.q.scaled")
        scores = b.node("MatMul", [q, split["k"]], f"{p}.scores")
        attn = b.node("Softmax", [scores], f"{p}.attn", axis=-1)
        context = b.node("MatMul", [attn, split["v"]], f"{p}.context")
        merged = b.node("Reshape", [b.node("Transpose", [context], f"{p}.context.t", perm=[0, 2, 1, 3]), model_shape],
                        f"{p}.merged")
        attended = b.node("Add", [linear(merged, f"{p}.o", dim, dim), x], f"{p}.residual1")
        normed = layer_norm(attended, f"{p}.ln1")
        fc1 = linear(normed, f"{p}.fc1", dim, ffn)
        erf = b.node("Erf", [b.node("Div", [fc1, sqrt_2], f"{p}.gelu.div")], f"{p}.gelu.erf")
        gelu = b.node("Mul", [b.node("Mul", [fc1, b.node("Add", [erf, one], f"{p}.gelu.add")], f"{p}.gelu.mul"), half],
                      f"{p}.gelu")
        ffn_out = b.node("Add", [linear(gelu, f"{p}.fc2", ffn, dim), normed], f"{p}.residual2")
        x = layer_norm(ffn_out, f"{p}.ln2", "encoded" if layer == layers - 1 else None)
    save_model(b.nodes, "bert_encoder", [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, seq, dim])],
               [helper.make_tensor_value_info("encoded", TensorProto.FLOAT, [1, seq, dim])], b.init,
               os.path.join(out_dir, "encoder.onnx"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="folder to write resnet.onnx and encoder.onnx into (created if missing)")
    parser.add_argument("--size", type=int, default=224, help="ResNet input height and width (default 224)")
    parser.add_argument("--layers", type=int, default=1, help="encoder layers (default 1)")
    parser.add_argument("--seq", type=int, default=128, help="encoder sequence length (default 128)")
    args = parser.parse_args()
    if args.size < 32 or args.layers < 1 or args.seq < 1:
        parser.error("--size must be at least 32, --layers and --seq at least 1")
    os.makedirs(args.dir, exist_ok=True)
    resnet(args.dir, args.size)
    encoder(args.dir, args.layers, args.seq)
