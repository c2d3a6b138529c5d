"""peers.py's model and settings: Hugging Face's BertModel (BERT-base) with
seeded parameters, its inputs, its ONNX export, and the settings that run it."""

import collections
import os

MODEL_TAG = "hfbert-ts-v2"  # bump when the model, its parameters or the export change
SEED = 1234
OPSET = 17
D, HEADS, DFF, VOCAB = 768, 12, 3072, 30522


class Setting(collections.namedtuple("Setting", "name kind title precision")):
    @property
    def low(self):
        return self.precision != "f32"


SETTINGS = collections.OrderedDict((s.name, s) for s in [
    Setting("attnc", "attnc", "attnc", "f32"),
    Setting("attnc-bf16", "attnc", "attnc --precision=bf16", "bf16"),
    Setting("attnc-int8", "attnc", "attnc --quantize=int8", "int8 dynamic"),
    Setting("ort", "ort", "ONNX Runtime (session optimizations only)", "f32"),
    Setting("ort-opt", "ort", "ONNX Runtime + transformers optimizer", "f32"),
    Setting("ort-int8", "ort", "ONNX Runtime + optimizer + quantize_dynamic", "int8 dynamic"),
    Setting("iree", "iree", "IREE llvm-cpu", "f32"),
    Setting("torch-eager", "torch", "PyTorch eager", "f32"),
    Setting("torch-sdpa", "torch", "PyTorch SDPA", "f32"),
    Setting("torch-compile", "torch", "PyTorch SDPA + torch.compile", "f32"),
    Setting("torch-bf16", "torch", "PyTorch SDPA, bf16 autocast", "bf16 autocast"),
])
PEERS = [n for n in SETTINGS if n != "attnc"]
MODULES = {"attnc": (), "ort": ("onnxruntime", "onnx"), "iree": ("iree.compiler", "iree.runtime"),
           "torch": ("torch", "transformers")}


def build_bert(layers, attn="eager"):
    import torch
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=VOCAB, hidden_size=D, num_hidden_layers=layers,
                     num_attention_heads=HEADS, intermediate_size=DFF, hidden_act="gelu",
                     layer_norm_eps=1e-12, attn_implementation=attn)
    model = BertModel(cfg, add_pooling_layer=False).eval()
    # HF's init leaves biases 0 and LayerNorm at (1, 0), which the exporter
    # folds into shared constants; random values keep every tensor distinct.
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            r = torch.randn(p.shape, generator=gen)
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.1 * r)
            elif "LayerNorm.bias" in name:
                p.copy_(0.1 * r)
            else:
                p.copy_(0.02 * r)
    return model


def model_inputs(seq):
    import numpy as np
    rng = np.random.default_rng(SEED + seq)
    ids = rng.integers(0, VOCAB, size=(1, seq), dtype=np.int64)
    return ids, np.ones((1, seq), np.int64)


def paths(wd, layers, seq):
    stem = os.path.join(wd, "%s_L%d_S%d" % (MODEL_TAG, layers, seq))
    return {"onnx": stem + ".onnx", "ref": stem + ".ref.npy", "stem": stem,
            "ids": os.path.join(wd, "input_ids_%d.npy" % seq),
            "mask": os.path.join(wd, "attention_mask_%d.npy" % seq)}


def export_main(wd, layers, seq):
    """Child process: export the model at one sequence length, with PyTorch's output."""
    import numpy as np
    import torch

    class Encoder(torch.nn.Module):
        # transformers 5's forward takes its options as keywords; the
        # TorchScript exporter passes positional arguments.
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids,
                             attention_mask=attention_mask).last_hidden_state

    p = paths(wd, layers, seq)
    ids, mask = model_inputs(seq)
    np.save(p["ids"], ids)
    np.save(p["mask"], mask)
    model = Encoder(build_bert(layers))
    args = (torch.from_numpy(ids), torch.from_numpy(mask))
    with torch.no_grad():
        ref = model(*args).numpy()
        tmp = p["onnx"] + ".tmp"
        torch.onnx.export(model, args, tmp, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], opset_version=OPSET,
                          do_constant_folding=True, dynamo=False)
    np.save(p["ref"], ref)
    os.replace(tmp, p["onnx"])
