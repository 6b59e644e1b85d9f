#!/usr/bin/python3
"""Writes the whole-model tests' ONNX models, inputs and reference outputs.

Usage: make_test_models.py DIR          the three hand-written models below
       make_test_models.py --zoo DIR    the model zoo (see zoo())

Two models at opset 17, random weights as initializers (seeded: the same files each run):
  cnn.onnx      x float32[1,3,32,32] -> y float32[1,10]:
                Conv(3->8, 3x3, pad 1), BatchNormalization, Relu, MaxPool 2x2, Conv(8->16, 3x3,
                pad 1), Relu, GlobalAveragePool, Flatten, Gemm(16->10)
  encoder.onnx  hidden float32[1,16,64] -> encoded float32[1,16,64]: a transformer encoder
                block: Q/K/V projections, 4 heads, softmax(QK^T / sqrt(d)) V, output projection,
                residual, LayerNormalization, MLP with the Erf form of GELU, residual
and one at opset 21, of what opsets 18 to 21 changed or added:
  opset21.onnx  x float32[1,4,6,6] -> y float32[1,2,12,8]: Pad (wrap mode, an axes input),
                GroupNormalization (per-channel scale and bias, opset 21's), Mish, Gelu,
                Resize (an axes attribute), Split (num_outputs), ReduceMean (an axes input), Add
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


def opset21(out_dir):
    p = {"scale": (1 + 0.2 * rng.standard_normal(4)).astype(np.float32), "bias": weight((4,), 4)}
    consts = {
        "pads": np.array([1, 1], dtype=np.int64), "pad_axes": np.array([3], dtype=np.int64),
        "scales": np.array([2], dtype=np.float32), "mean_axes": np.array([2, 3], dtype=np.int64),
    }
    nodes = [
        helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["padded"], mode="wrap"),
        helper.make_node("GroupNormalization", ["padded", "scale", "bias"], ["normed"], num_groups=2,
                         epsilon=1e-5),
        helper.make_node("Mish", ["normed"], ["mish"]),
        helper.make_node("Gelu", ["mish"], ["gelu"]),
        helper.make_node("Resize", ["gelu", "", "scales"], ["tall"], axes=[2], mode="nearest"),
        helper.make_node("Split", ["tall"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("ReduceMean", ["a", "mean_axes"], ["a_mean"], keepdims=1),
        helper.make_node("Add", ["b", "a_mean"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "opset21", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 12, 8])],
        [numpy_helper.from_array(v, k) for k, v in {**p, **consts}.items()])
    # Not checked: Debian's onnx 1.12 knows opsets up to 17.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="temper-tests")
    onnx.save(model, os.path.join(out_dir, "opset21.onnx"))

    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    h = x.astype(np.float64)
    h = np.concatenate([h[..., -1:], h, h[..., :1]], axis=3)  # wrap by one on the last axis
    groups = h.reshape(1, 2, -1)
    groups = (groups - groups.mean(axis=2, keepdims=True)) / np.sqrt(groups.var(axis=2, keepdims=True) + 1e-5)
    h = groups.reshape(h.shape) * p["scale"].reshape(1, 4, 1, 1) + p["bias"].reshape(1, 4, 1, 1)
    h = h * np.tanh(np.log1p(np.exp(h)))
    h = h * 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    h = np.repeat(h, 2, axis=2)  # nearest, half_pixel, round_prefer_floor: each row twice
    a, b = h[:, :2], h[:, 2:]
    y = b + a.mean(axis=(2, 3), keepdims=True)
    np.save(os.path.join(out_dir, "opset21_input.npy"), x)
    np.save(os.path.join(out_dir, "opset21_expected.npy"), y)


def zoo(out_dir):
    """The model zoo: models as a user exports them, by torch.onnx.export (opset 17) from
    Debian's PyTorch and torchvision (python3-torch, python3-torchvision), random weights
    (seeded per model), PyTorch's own outputs as the reference.

    CNNs from torchvision at 64x64 (small, for CI's time; their adaptive pools take any
    size), their batch norms and linear layers given trained-like scales (like_trained),
    exported with a dynamic batch dimension 'batch': NAME.onnx, NAME_x.npy (batch 1) and
    NAME_y.npy; for squeezenet1_1 and resnet18 also a batch of 8 (NAME_b8_x.npy,
    NAME_b8_y.npy), and squeezenet1_1 also exported with a static batch of 1
    (squeezenet1_1_static.onnx, not in zoo.txt). A ViT-tiny-like encoder (torchvision's VisionTransformer: 32x32 image,
    8x8 patches, 2 layers, 3 heads, width 192) and a small BERT (2 layers, 4 heads, width
    64) written as Hugging Face's is: token, position and type embeddings, an attention mask
    input turned into an additive bias by Equal and Where, the Erf GELU, a tanh pooler; its
    batch and sequence dimensions are dynamic, and its second sequence is padded.
    zoo.txt lists one case per line: its name, the model file, its inputs NAME=FILE, '->',
    its outputs NAME=FILE."""
    import warnings

    import torch
    import torchvision
    from torch import nn

    warnings.filterwarnings("ignore")  # the exporter's notes on tracing and constant folding
    manifest = []

    def export(name, model, inputs, outputs, dynamic_axes, suffix=""):
        model.eval()
        if not suffix:
            torch.onnx.export(model, tuple(inputs.values()), os.path.join(out_dir, name + ".onnx"),
                              opset_version=17, input_names=list(inputs), output_names=outputs,
                              dynamic_axes=dynamic_axes)
        with torch.no_grad():
            results = model(*inputs.values())
        if isinstance(results, torch.Tensor):
            results = (results,)
        files = []
        for key, value in inputs.items():
            np.save(os.path.join(out_dir, f"{name}{suffix}_{key}.npy"), value.numpy())
            files.append(f"{key}={name}{suffix}_{key}.npy")
        files.append("->")
        for key, value in zip(outputs, results):
            np.save(os.path.join(out_dir, f"{name}{suffix}_{key}.npy"), value.numpy())
            files.append(f"{key}={name}{suffix}_{key}.npy")
        manifest.append(" ".join([name + suffix, name + ".onnx"] + files))

    batch = {"x": {0: "batch"}, "y": {0: "batch"}}
    for name in ["resnet18", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x0_5", "efficientnet_b0",
                 "regnet_y_400mf", "densenet121"]:
        torch.manual_seed(len(manifest))
        model = like_trained(getattr(torchvision.models, name)().eval(), nn)
        export(name, model, {"x": torch.randn(1, 3, 64, 64)}, ["y"], batch)
        if name in ("squeezenet1_1", "resnet18"):
            export(name, model, {"x": torch.randn(8, 3, 64, 64)}, ["y"], batch, suffix="_b8")
        if name == "squeezenet1_1":  # as most exports are: batch 1, static
            torch.onnx.export(model, torch.randn(1, 3, 64, 64), os.path.join(out_dir, name + "_static.onnx"),
                              opset_version=17, input_names=["x"], output_names=["y"])

    torch.manual_seed(100)
    vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=3,
                                               hidden_dim=192, mlp_dim=768, num_classes=10)
    # torchvision starts the head at zero, which would make every output 0.
    nn.init.normal_(vit.heads.head.weight, std=0.05)
    nn.init.normal_(vit.heads.head.bias, std=0.05)
    export("vit_tiny", vit, {"x": torch.randn(1, 3, 32, 32)}, ["y"], batch)

    torch.manual_seed(101)
    bert = SmallBert(torch)
    ids = torch.randint(0, bert.vocab, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 10:] = 0
    seq = {0: "batch", 1: "seq"}
    export("bert_small", bert, {"input_ids": ids, "attention_mask": mask}, ["hidden", "pooled"],
           {"input_ids": seq, "attention_mask": seq, "hidden": seq, "pooled": {0: "batch"}})

    with open(os.path.join(out_dir, "zoo.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")


def like_trained(model, nn):
    """Batch norms given statistics and scales away from their initial 0 and 1, and linear
    layers a unit gain: at torchvision's initialisation some CNNs' outputs shrink to 1e-9
    (MobileNetV3) or 1e-14 (EfficientNet), too small to compare."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.normal_(0, 0.1)
            module.running_var.uniform_(0.5, 1.5)
            module.weight.data.normal_(1, 0.2)
            module.bias.data.normal_(0, 0.2)
        elif isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=module.in_features ** -0.5)
    return model


def SmallBert(torch, vocab=512, width=64, layers=2, heads=4, inner=256, max_positions=64):
    """A BERT encoder as Hugging Face's modeling_bert writes it, small."""
    from torch import nn
    import torch.nn.functional as F

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))
            self.ln1, self.ln2 = nn.LayerNorm(width, eps=1e-12), nn.LayerNorm(width, eps=1e-12)
            self.fc1, self.fc2 = nn.Linear(width, inner), nn.Linear(inner, width)

        def forward(self, x, bias):
            b, n, _ = x.shape
            d = width // heads

            def split(t):
                return t.view(b, n, heads, d).transpose(1, 2)

            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
            x = self.ln1(x + self.o((probs @ v).transpose(1, 2).reshape(b, n, width)))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.vocab = vocab
            self.words, self.positions = nn.Embedding(vocab, width), nn.Embedding(max_positions, width)
            self.token_types = nn.Embedding(2, width)
            self.ln = nn.LayerNorm(width, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.pool = nn.Linear(width, width)

        def forward(self, input_ids, attention_mask):
            b, n = input_ids.shape
            positions = torch.arange(n, dtype=torch.long).unsqueeze(0).expand(b, n)
            x = self.words(input_ids) + self.positions(positions) + self.token_types(torch.zeros_like(input_ids))
            x = self.ln(x)
            mask = attention_mask[:, None, None, :].expand(b, 1, n, n)
            bias = torch.where(mask == 0, torch.tensor(torch.finfo(torch.float32).min), torch.tensor(0.0))
            for layer in self.layers:
                x = layer(x, bias)
            return x, torch.tanh(self.pool(x[:, 0]))

    return Bert().eval()


if __name__ == "__main__":
    args = sys.argv[1:]
    make_zoo = args[:1] == ["--zoo"]
    if make_zoo:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    os.makedirs(args[0], exist_ok=True)
    if make_zoo:
        zoo(args[0])
    else:
        cnn(args[0])
        encoder(args[0])
        opset21(args[0])
