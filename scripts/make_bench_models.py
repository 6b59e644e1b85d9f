#!/usr/bin/python3
"""Writes the end-to-end benchmark's ONNX models (benchmarks/model_e2e.cpp).

Usage: make_bench_models.py DIR [--size N] [--layers L] [--seq S] [--only NAME,...]

Random weights (seeded: the same files each run), fp32, batch 1:
  resnet18.onnx, mobilenet_v2.onnx, resnet50.onnx
                torchvision's models exported by torch.onnx.export (opset 13, eval mode, so
                each BatchNormalization is folded into its Conv as PyTorch exports it), input
                float32[1,3,N,N] -> logits float32[1,1000] (N = --size, default 224); the
                batch-norm statistics are drawn at random too, so that folding them matters
  bert_layer.onnx, bert_encoder.onnx
                hidden float32[1,S,768] -> encoded float32[1,S,768] (S = --seq, default 128):
                one and L (--layers, default 4) BERT-base encoder layers, written node by node
                as PyTorch exports them: MatMul by 2-D weights + Add bias, Reshape/Transpose
                to 12 heads, Q divided by sqrt(64), batched MatMul Q K^T, Softmax, MatMul by
                V, Transpose/Reshape back, output projection, residual Add, layer norm
                written out (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div; then Mul
                gamma, Add beta on a [S,768] view, Reshape back: OpenCV 4.6 cannot broadcast
                gamma over [1,S,768]), FFN 3072 with the Erf form of GELU, residual Add,
                layer norm
  bert_masked.onnx
                hidden float32[1,S,384], attention_mask int64[1,S] -> encoded float32[1,S,384]:
                a BERT-family model (6 layers of hidden 384, 12 heads, FFN 1536: MiniLM's
                shape) written in PyTorch and exported by torch.onnx.export (opset 13): the
                mask becomes (1 - mask) * -10000 added to every head's scores, nn.LayerNorm
                and the Erf GELU as the exporter writes them
Needs Debian's python3-onnx and python3-numpy, and for the CNNs python3-torch and
python3-torchvision (/usr/bin/python3; scripts/install-deps.sh --bench installs them).
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


CNNS = {"resnet18": "resnet18", "mobilenet_v2": "mobilenet_v2", "resnet50": "resnet50"}


def torchvision_cnn(out_dir, name, size):
    import torch
    import torchvision

    torch.manual_seed(20240611)
    model = getattr(torchvision.models, CNNS[name])(weights=None)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(1 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
                m.running_mean.copy_(0.1 * torch.randn_like(m.running_mean))
                m.running_var.copy_(0.5 + torch.rand_like(m.running_var))
    model.eval()
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, torch.randn(1, 3, size, size), path, opset_version=OPSET, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def torch_bert(path, seq):
    import torch

    dim, heads, ffn, layers = 384, 12, 1536, 6
    torch.manual_seed(20240611)

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim) for _ in range(4))
            self.ln1, self.ln2 = torch.nn.LayerNorm(dim, eps=1e-12), torch.nn.LayerNorm(dim, eps=1e-12)
            self.fc1, self.fc2 = torch.nn.Linear(dim, ffn), torch.nn.Linear(ffn, dim)

        def forward(self, x, mask_add):
            def split(t):
                return t.view(1, seq, heads, dim // heads).transpose(1, 2)

            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            scores = q @ k.transpose(-1, -2) / math.sqrt(dim // heads) + mask_add
            context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(1, seq, dim)
            x = self.ln1(x + self.o(context))
            return self.ln2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, hidden, attention_mask):
            mask_add = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            for layer in self.layers:
                hidden = layer(hidden, mask_add)
            return hidden

    model = Model().eval()
    mask = torch.ones(1, seq, dtype=torch.int64)
    torch.onnx.export(model, (torch.randn(1, seq, dim), mask), path, opset_version=OPSET,
                      input_names=["hidden", "attention_mask"], output_names=["encoded"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def encoder(path, layers, seq):
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
               path)


MODELS = list(CNNS) + ["bert_layer", "bert_encoder", "bert_masked"]

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="folder to write the models into (created if missing)")
    parser.add_argument("--size", type=int, default=224, help="the CNNs' input height and width (default 224)")
    parser.add_argument("--layers", type=int, default=4, help="bert_encoder's layers (default 4)")
    parser.add_argument("--seq", type=int, default=128, help="the encoders' sequence length (default 128)")
    parser.add_argument("--only", default=",".join(MODELS), help="the models to write, comma-separated (default all: "
                        + ",".join(MODELS) + ")")
    args = parser.parse_args()
    if args.size < 32 or args.layers < 1 or args.seq < 1:
        parser.error("--size must be at least 32, --layers and --seq at least 1")
    only = [m for m in args.only.split(",") if m]
    unknown = [m for m in only if m not in MODELS]
    if unknown:
        parser.error(f"unknown model {', '.join(unknown)}; the models are {', '.join(MODELS)}")
    os.makedirs(args.dir, exist_ok=True)
    for name in only:
        if name in CNNS:
            torchvision_cnn(args.dir, name, args.size)
        elif name == "bert_masked":
            torch_bert(os.path.join(args.dir, name + ".onnx"), args.seq)
        else:
            encoder(os.path.join(args.dir, name + ".onnx"), 1 if name == "bert_layer" else args.layers, args.seq)
