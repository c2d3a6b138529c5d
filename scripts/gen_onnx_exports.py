#!/usr/bin/env python3
"""Exports tiny random transformers models to ONNX the ways users do today,
and writes transformers' own outputs as the references the tests compare with.

    scripts/setup.sh --generators          # creates .venv-gen (pinned versions)
    .venv-gen/bin/python scripts/gen_onnx_exports.py [--only FAMILY,...] [OUTDIR]

Fourteen families, each built from a tiny config with a seeded random init
(nothing is downloaded), with use_cache=False, inputs input_ids and
attention_mask [batch, sequence], both dimensions dynamic, exported:
  dynamo     torch.onnx.export(dynamo=True) at its default opset
  dynamo23   the same at opset_version=23
  ts17       the TorchScript exporter (dynamo=False) at opset 17
with attn_implementation "eager" and "sdpa" each. The output is the encoder's
last hidden state or the decoder's logits.

Writes into OUTDIR (default test/ONNX/Exports):
  <family>-<attn>-<exporter>.onnx      the export (weights inline; tiny)
  <family>.<shape>.input_ids.npy       seeded ids, per shape
  <family>.<shape>.attention_mask.npy  with padded (zero) tails on some rows
  <family>.<shape>.ref.npy             transformers' output (eager attention)
  <family>-<attn>-<exporter>-past.onnx decoders (sdpa attention; BLOOM,
                                       which has only eager, eager):
                                       exported with past key/values as
                                       inputs
                                       (past_key_values.<i>.key/value
                                       [batch, kv heads, past, head]) and
                                       presents as outputs; attention_mask
                                       [batch, past + sequence]
  <family>.generate_prompt.npy         decoders: int64 [2, 9], row 0 uses
                                       its first 5 tokens
  <family>.generate_lengths.npy        decoders: int64 [2]
  <family>.generate_expected.npy       decoders: transformers' greedy new
                                       tokens ([2, 24], generate() on each
                                       row alone), the reference for
                                       decoding with --kv-cache
  manifest.json                        per export: exporter, opset, status,
                                       ops used, and onnxruntime's max
                                       abs error against the reference
An export the exporter itself refuses is listed with its error and no file.

Versions: the ones pinned in scripts/setup.sh --generators (torch 2.15,
transformers 5.23, onnx 1.23, onnxruntime 1.32, onnxscript 0.7). Rerun after
changing them, and commit the manifest with the models.
"""

import argparse
import collections
import contextlib
import io
import json
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 99
# (batch, sequence, valid lengths per row): row lengths < sequence are
# right-padded with attention_mask 0.
SHAPES = ((1, 8, (8,)), (2, 5, (5, 3)), (3, 11, (11, 7, 9)))

COMMON = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
              num_attention_heads=4, intermediate_size=64,
              max_position_embeddings=64)


def families():
    t = transformers
    dec = dict(COMMON, tie_word_embeddings=False)
    return {
        # Encoders: last_hidden_state.
        "bert": (t.BertModel, t.BertConfig(**COMMON, type_vocab_size=2)),
        "roberta": (t.RobertaModel,
                    t.RobertaConfig(**dict(COMMON, max_position_embeddings=80),
                                    type_vocab_size=1, pad_token_id=1)),
        "distilbert": (t.DistilBertModel,
                       t.DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2,
                                          n_heads=4, hidden_dim=64,
                                          max_position_embeddings=64)),
        "electra": (t.ElectraModel,
                    t.ElectraConfig(**COMMON, embedding_size=16)),
        "albert": (t.AlbertModel,
                   t.AlbertConfig(**COMMON, embedding_size=16)),
        # Decoders: logits.
        "gpt2": (t.GPT2LMHeadModel,
                 t.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                              n_positions=64)),
        "gpt_neox": (t.GPTNeoXForCausalLM,
                     t.GPTNeoXConfig(**dec, rotary_pct=0.5)),
        "opt": (t.OPTForCausalLM,
                t.OPTConfig(vocab_size=VOCAB, hidden_size=32,
                            num_hidden_layers=2, num_attention_heads=4,
                            ffn_dim=64, max_position_embeddings=64,
                            word_embed_proj_dim=32, pad_token_id=1)),
        "bloom": (t.BloomForCausalLM,
                  t.BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2,
                                n_head=4)),
        "llama": (t.LlamaForCausalLM,
                  t.LlamaConfig(**dec, num_key_value_heads=2)),
        "mistral": (t.MistralForCausalLM,
                    t.MistralConfig(**dec, num_key_value_heads=2,
                                    sliding_window=4)),
        "qwen2": (t.Qwen2ForCausalLM,
                  t.Qwen2Config(**dec, num_key_value_heads=2)),
        "gemma": (t.GemmaForCausalLM,
                  t.GemmaConfig(**dict(dec, tie_word_embeddings=True),
                                num_key_value_heads=2, head_dim=8)),
        "phi": (t.PhiForCausalLM,
                t.PhiConfig(**dec, partial_rotary_factor=0.5)),
    }


ENCODERS = {"bert", "roberta", "distilbert", "electra", "albert"}
EXPORTERS = ("dynamo", "dynamo23", "ts17")
ATTENTION = ("eager", "sdpa")


class Wrapped(torch.nn.Module):
    """(input_ids, attention_mask) -> one tensor."""

    def __init__(self, model, encoder):
        super().__init__()
        self.model = model
        self.encoder = encoder

    def forward(self, input_ids, attention_mask):
        if self.encoder:
            return self.model(input_ids=input_ids,
                              attention_mask=attention_mask).last_hidden_state
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


def build(family, attn):
    cls, config = families()[family]
    config._attn_implementation = attn
    torch.manual_seed(0)
    model = cls(config).eval()
    return Wrapped(model, family in ENCODERS)


def make_inputs(family):
    rng = np.random.default_rng(sum(map(ord, family)))
    out = []
    for batch, seq, lengths in SHAPES:
        # Ids from 3: 0-2 are special in some families (pad 1 in RoBERTa/OPT).
        ids = rng.integers(3, VOCAB, size=(batch, seq), dtype=np.int64)
        mask = np.zeros((batch, seq), np.int64)
        for row, n in enumerate(lengths):
            mask[row, :n] = 1
        out.append((f"{batch}x{seq}", ids, mask))
    return out


GENERATE_LENGTHS = (5, 9)
GENERATE_NEW_TOKENS = 24


def write_generation(family, outdir):
    """transformers' greedy continuation of two prompts (each row alone, so
    no padding), and the smallest gap between the best and second-best
    logit over all steps: a near tie could flip under float rounding."""
    model = build(family, "eager").model
    rng = np.random.default_rng(1234)
    prompt = rng.integers(3, VOCAB, size=(len(GENERATE_LENGTHS),
                                          max(GENERATE_LENGTHS)),
                          dtype=np.int64)
    expected = np.zeros((len(GENERATE_LENGTHS), GENERATE_NEW_TOKENS),
                        np.int64)
    min_gap = float("inf")
    for row, length in enumerate(GENERATE_LENGTHS):
        with torch.no_grad():
            out = model.generate(torch.from_numpy(prompt[row:row + 1, :length]),
                                 max_new_tokens=GENERATE_NEW_TOKENS,
                                 min_new_tokens=GENERATE_NEW_TOKENS,
                                 do_sample=False, output_scores=True,
                                 return_dict_in_generate=True, pad_token_id=0)
        expected[row] = out.sequences[0, length:].numpy()
        for scores in out.scores:
            top2 = torch.topk(scores[0], 2).values
            min_gap = min(min_gap, float(top2[0] - top2[1]))
    for name, value in (("prompt", prompt), ("expected", expected),
                        ("lengths", np.array(GENERATE_LENGTHS, np.int64))):
        np.save(os.path.join(outdir, f"{family}.generate_{name}.npy"), value)
    print(f"{family}: greedy tokens {expected.tolist()}, min top-2 logit gap "
          f"{min_gap:.3g}", flush=True)


def strip(path):
    """Drops what only documents the export (doc strings, the exporter's
    per-node metadata: stack traces with this machine's paths, FX node text):
    smaller files, the same graph."""
    proto = onnx.load(path)
    proto.doc_string = ""
    del proto.metadata_props[:]
    proto.graph.doc_string = ""
    for node in proto.graph.node:
        node.doc_string = ""
        del node.metadata_props[:]
    for value in list(proto.graph.value_info) + list(proto.graph.input) + \
            list(proto.graph.output) + list(proto.graph.initializer):
        value.doc_string = ""
        del value.metadata_props[:]
    onnx.save(proto, path)


def export(model, exporter, path, sample):
    ids, mask = (torch.from_numpy(a) for a in sample)
    names = dict(input_names=["input_ids", "attention_mask"],
                 output_names=["output"])
    if exporter == "ts17":
        torch.onnx.export(model, (ids, mask), path, dynamo=False,
                          opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "sequence"}
                                        for n in names["input_names"]}
                          | {"output": {0: "batch", 1: "sequence"}},
                          **names)
        return
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    kw = {"opset_version": 23} if exporter == "dynamo23" else {}
    program = torch.onnx.export(
        model, (ids, mask), dynamo=True, dynamic_shapes=(
            {0: batch, 1: seq}, {0: batch, 1: seq}), **names, **kw)
    program.save(path)


class WithPast(torch.nn.Module):
    """(input_ids, attention_mask, past keys and values...) -> (logits,
    present keys and values...): the decoder exported with past key/values,
    its cache a DynamicCache built from the inputs."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, *past):
        cache = transformers.DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         past_key_values=cache, use_cache=True)
        presents = []
        for layer in out.past_key_values.layers[:self.layers]:
            presents += [layer.keys, layer.values]
        return (out.logits, *presents)


def save_past_export(model, exporter, path):
    """Writes `model` exported with past key/values by `exporter` to `path`
    (external data beside it where the model passes protobuf's 2 GB);
    returns the wrapped model, the sample arguments at batch 2, past 3,
    sequence 4, and the input names."""
    wrapped = WithPast(model).eval()
    config = model.config
    heads = getattr(config, "num_key_value_heads", None) or \
        config.num_attention_heads
    width = getattr(config, "head_dim", None) or \
        config.hidden_size // config.num_attention_heads
    batch, past_len, seq = 2, 3, 4
    gen = torch.Generator().manual_seed(5)
    ids = torch.randint(3, VOCAB, (batch, seq), generator=gen)
    mask = torch.ones(batch, past_len + seq, dtype=torch.int64)
    past = [torch.randn(batch, heads, past_len, width, generator=gen)
            for _ in range(2 * wrapped.layers)]
    kinds = ("key", "value")
    names = ["input_ids", "attention_mask"] + [
        f"past_key_values.{i // 2}.{kinds[i % 2]}"
        for i in range(2 * wrapped.layers)]
    outputs = ["logits"] + [f"present.{i // 2}.{kinds[i % 2]}"
                            for i in range(2 * wrapped.layers)]
    args = (ids, mask, *past)
    if exporter == "ts17":
        axes = {"input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "past_sequence + sequence"},
                "logits": {0: "batch", 1: "sequence"}}
        for name in names[2:] + outputs[1:]:
            axes[name] = {0: "batch", 2: ("past_sequence" if name in names
                                          else "past_sequence + sequence")}
        torch.onnx.export(wrapped, args, path, dynamo=False, opset_version=17,
                          input_names=names, output_names=outputs,
                          dynamic_axes=axes)
    else:
        b, s = torch.export.Dim("batch"), torch.export.Dim("sequence")
        p = torch.export.Dim("past_sequence")
        # torch.export cannot say past + sequence: the mask's length is its
        # own symbol.
        m = torch.export.Dim("mask_sequence")
        shapes = ({0: b, 1: s}, {0: b, 1: m},
                  tuple({0: b, 2: p} for _ in past))
        kw = {"opset_version": 23} if exporter == "dynamo23" else {}
        program = torch.onnx.export(wrapped, args, dynamo=True,
                                    dynamic_shapes=shapes, input_names=names,
                                    output_names=outputs, **kw)
        program.save(path)
    return wrapped, args, names


def export_past(model, exporter, path):
    """Exports `model` with past key/values; returns the largest error of
    onnxruntime's outputs (or ONNX's reference evaluator's, where
    onnxruntime cannot run the model) against torch at batch 2, past 3,
    sequence 4, and which of the two ran."""
    wrapped, args, names = save_past_export(model, exporter, path)
    strip(path)
    with torch.no_grad():
        refs = wrapped(*args)
    feeds = {n: t.numpy() for n, t in zip(names, args)}
    try:
        session = ort.InferenceSession(path,
                                       providers=["CPUExecutionProvider"])
        got, runner = session.run(None, feeds), "onnxruntime"
    except Exception:
        # onnxruntime 1.32 refuses RotaryEmbedding-23 caches broadcast over
        # the batch; ONNX's reference evaluator runs them.
        from onnx.reference import ReferenceEvaluator
        got, runner = ReferenceEvaluator(path).run(None, feeds), \
            "onnx.reference"
    return max(float(np.abs(g - r.numpy()).max())
               for g, r in zip(got, refs)), runner


def try_export(name, entry, path, exports, run):
    """Runs `run()`, one export to `path`, with the exporter's output
    captured. Returns the exported model, with entry["opset"] set, and what
    `run` returned; (None, None) where the exporter refused it (recorded by
    `refused`)."""
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            result = run()
    except Exception as e:  # the exporter refused it
        refused(name, entry, e, path, exports)
        return None, None
    proto = onnx.load(path)
    entry["opset"] = next(o.version for o in proto.opset_import
                          if o.domain in ("", "ai.onnx"))
    return proto, result


def refused(name, entry, error, path, exports):
    """Records that the exporter refused `name` (no file is left)."""
    msg = str(error).strip().splitlines()
    entry["status"] = "export failed: " + (
        msg[0][:300] if msg else type(error).__name__)
    if os.path.exists(path):
        os.remove(path)
    exports[name] = entry
    print(f"{name}: {entry['status']}", flush=True)


def write_past_exports(family, outdir, exports, exporters=EXPORTERS):
    """The family's sdpa model (BLOOM's eager one: transformers has no other)
    exported with past key/values by each exporter (export_past), recorded
    in `exports`."""
    if family in ENCODERS:
        return
    attention = "eager" if family == "bloom" else "sdpa"
    model = build(family, attention).model
    for exporter in exporters:
        name = f"{family}-{attention}-{exporter}-past"
        path = os.path.join(outdir, name + ".onnx")
        entry = {"family": family, "attention": attention,
                 "exporter": exporter, "past": True}
        proto, result = try_export(
            name, entry, path, exports,
            lambda: export_past(model, exporter, path))
        if proto is None:
            continue
        err, runner = result
        entry["export_max_abs_err"] = err
        entry["export_checked_by"] = runner
        entry["status"] = "exported"
        exports[name] = entry
        print(f"{name}: opset {entry['opset']}, {len(proto.graph.node)} "
              f"nodes, {runner} err {err}", flush=True)


def export_error(path, inputs, refs):
    """How far the export itself is from transformers: the largest error of
    onnxruntime's outputs, or (where onnxruntime cannot run the model, e.g.
    opset 23's RotaryEmbedding caches) of ONNX's reference evaluator's,
    relative to max(1, max|ref|); and which of the two ran."""
    def outputs(run):
        return [run({"input_ids": ids, "attention_mask": mask})
                for _, ids, mask in inputs]
    try:
        session = ort.InferenceSession(path,
                                       providers=["CPUExecutionProvider"])
        outs = outputs(lambda feeds: session.run(None, feeds)[0])
        runner = "onnxruntime"
    except Exception:
        from onnx.reference import ReferenceEvaluator
        evaluator = ReferenceEvaluator(path)
        outs = outputs(lambda feeds: evaluator.run(None, feeds)[0])
        runner = "onnx.reference"
    worst = 0.0
    for out, ref in zip(outs, refs):
        worst = max(worst, float(np.abs(out - ref).max() /
                                 max(1.0, float(np.abs(ref).max()))))
    return worst, runner


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", nargs="?",
                        default=os.path.join(HERE, "..", "test", "ONNX",
                                             "Exports"))
    parser.add_argument("--only", default="",
                        help="comma-separated families (default: all)")
    parser.add_argument("--exporters", default="",
                        help="with --past-only: comma-separated exporters "
                             "(default: all)")
    parser.add_argument("--past-only", action="store_true",
                        help="only export the decoders with past key/values "
                             "(write_past_exports)")
    parser.add_argument("--generation-only", action="store_true",
                        help="only write the decoders' greedy-token "
                             "references (write_generation)")
    parser.add_argument("--refresh-fidelity", action="store_true",
                        help="only recompute each committed export's own "
                             "error against transformers (export_error)")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    warnings.filterwarnings("ignore")
    manifest_path = os.path.join(args.outdir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest["versions"] = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "onnx": onnx.__version__, "onnxruntime": ort.__version__}
    exports = manifest.setdefault("exports", {})

    # Also after each export, so that an interrupted run keeps what it did.
    def save_manifest():
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")

    only = [f for f in args.only.split(",") if f]
    if args.refresh_fidelity:
        for name, entry in sorted(exports.items()):
            family = entry["family"]
            if (entry["status"] != "exported" or entry.get("past") or
                    (only and family not in only)):
                continue
            inputs = [(tag, np.load(os.path.join(
                args.outdir, f"{family}.{tag}.input_ids.npy")), np.load(
                os.path.join(args.outdir, f"{family}.{tag}.attention_mask.npy")))
                for tag in (f"{b}x{s}" for b, s, _ in SHAPES)]
            refs = [np.load(os.path.join(args.outdir, f"{family}.{tag}.ref.npy"))
                    for tag, _, _ in inputs]
            err, runner = export_error(os.path.join(args.outdir, name + ".onnx"),
                                       inputs, refs)
            entry["export_max_rel_err"] = err
            entry["export_checked_by"] = runner
            print(f"{name}: the export is {err:.1e} from transformers "
                  f"({runner})", flush=True)
        save_manifest()
        return 0
    if args.past_only:
        for family in families():
            if not only or family in only:
                write_past_exports(family, args.outdir, exports,
                                   [e for e in EXPORTERS
                                    if not args.exporters or
                                    e in args.exporters.split(",")])
        save_manifest()
        return 0
    if args.generation_only:
        for family in families():
            if family not in ENCODERS and (not only or family in only):
                write_generation(family, args.outdir)
        return 0
    for family in families():
        if only and family not in only:
            continue
        if family not in ENCODERS:
            write_generation(family, args.outdir)
            write_past_exports(family, args.outdir, exports)
        inputs = make_inputs(family)
        reference = build(family, "eager")
        refs = []
        for tag, ids, mask in inputs:
            np.save(os.path.join(args.outdir, f"{family}.{tag}.input_ids.npy"),
                    ids)
            np.save(os.path.join(args.outdir,
                                 f"{family}.{tag}.attention_mask.npy"), mask)
            with torch.no_grad():
                ref = reference(torch.from_numpy(ids),
                                torch.from_numpy(mask)).numpy()
            np.save(os.path.join(args.outdir, f"{family}.{tag}.ref.npy"), ref)
            refs.append(ref)
        for attn in ATTENTION:
            try:
                model = build(family, attn)
            except ValueError as e:  # transformers lacks this implementation
                for exporter in EXPORTERS:
                    name = f"{family}-{attn}-{exporter}"
                    exports[name] = {
                        "family": family, "attention": attn,
                        "exporter": exporter,
                        "status": "no such model: " + str(e).split(".")[0]}
                    print(f"{name}: {exports[name]['status']}", flush=True)
                continue
            for exporter in EXPORTERS:
                name = f"{family}-{attn}-{exporter}"
                path = os.path.join(args.outdir, name + ".onnx")
                entry = {"family": family, "attention": attn,
                         "exporter": exporter}
                proto, _ = try_export(
                    name, entry, path, exports,
                    lambda: (export(model, exporter, path, inputs[1][1:]),
                             strip(path)))
                if proto is None:
                    continue
                entry["ops"] = dict(sorted(collections.Counter(
                    n.op_type for n in proto.graph.node).items()))
                entry["functions"] = [f.name for f in proto.functions]
                errors = []
                try:
                    session = ort.InferenceSession(
                        path, providers=["CPUExecutionProvider"])
                    for (tag, ids, mask), ref in zip(inputs, refs):
                        out = session.run(None, {"input_ids": ids,
                                                 "attention_mask": mask})[0]
                        errors.append(float(np.abs(out - ref).max()))
                    entry["onnxruntime_max_abs_err"] = max(errors)
                except Exception as e:
                    entry["onnxruntime_max_abs_err"] = None
                    entry["onnxruntime_error"] = str(e).splitlines()[0][:300]
                err, runner = export_error(path, inputs, refs)
                entry["export_max_rel_err"] = err
                entry["export_checked_by"] = runner
                entry["status"] = "exported"
                exports[name] = entry
                print(f"{name}: opset {entry['opset']}, "
                      f"{len(proto.graph.node)} nodes, onnxruntime err "
                      f"{entry.get('onnxruntime_max_abs_err')}", flush=True)
                save_manifest()
    save_manifest()


if __name__ == "__main__":
    sys.exit(main())
