#!/usr/bin/python3
"""The attnc Python package (python/attnc) end to end: compile, load, run by
name, errors as exceptions. Numerics are checked against independent
references: PyTorch's committed output for the exported BERT-shaped ONNX
model, and the numpy reference model (test/reference/attn_ref.py via
scripts/make_weights.py) for the hand-written small encoder.

    api_check.py --src ATTNC_SRC --bin BUILD_BIN --workdir DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import checkutil  # noqa: E402


def expect_error(fn, *fragments):
    import attnc
    try:
        fn()
    except attnc.AttncError as e:
        message = str(e)
        for fragment in fragments:
            assert fragment in message, (fragment, message)
        print("error:", message.splitlines()[0])
        return
    raise AssertionError("no AttncError for %s" % (fragments,))


def main():
    args, attnc = checkutil.attnc_check()

    # An exported ONNX model: inputs and outputs by their graph names, the
    # weights written beside the library and found there.
    models = os.path.join(args.src, "test", "ONNX", "Models")
    ids = np.load(os.path.join(models, "bert_like.input_ids.npy"))
    mask = np.load(os.path.join(models, "bert_like.attention_mask.npy"))
    ref = np.load(os.path.join(models, "bert_like.ref.npy"))
    lib = attnc.compile(os.path.join(models, "bert_like-op17.onnx"),
                        os.path.join(args.workdir, "libbert.so"),
                        input_shape={"input_ids": ids.shape,
                                     "attention_mask": mask.shape})
    assert os.path.exists(lib + ".safetensors")
    with attnc.load(lib) as bert:
        print("inputs:", [(i.name, i.dtype, i.shape) for i in bert.inputs])
        print("outputs:", [(o.name, o.dtype, o.shape) for o in bert.outputs])
        out = bert.run(input_ids=ids, attention_mask=mask)
        (name, y), = out.items()
        err = checkutil.rel_err(y, ref)
        assert err <= 1e-4, err
        print("bert_like by name: %s max rel err %.1e <= 1e-4" % (name, err))
        # Positional inputs, and values converted to the model's dtype.
        y2 = bert(ids.astype(np.int32), mask)[name]
        assert np.array_equal(y, y2)
        print("bert_like positional: identical")
        expect_error(lambda: bert.run(input_ids=ids), "'attention_mask' is missing")
        expect_error(lambda: bert.run(input_ids=ids, attention_mask=mask, x=1),
                     "unknown input 'x'")
        expect_error(lambda: bert.run(input_ids=ids[:, :-1], attention_mask=mask),
                     "input 'input_ids' has shape", "dimension 1 is")
        expect_error(lambda: bert.run(input_ids=ids.astype(np.float32),
                                      attention_mask=mask),
                     "input 'input_ids' is float32")
        bad = ids.copy()
        bad[0, 3] = 10**6
        expect_error(lambda: bert.run(input_ids=bad, attention_mask=mask),
                     "token id 1000000 at batch 0, position 3 is out of range")
        # A failed run leaves the model usable.
        assert np.array_equal(bert.run(input_ids=ids, attention_mask=mask)[name], y)
        assert bert.last_run_ms > 0

    # Hand-written IR with explicit weights, against the numpy reference;
    # two models open side by side in one process.
    enc_lib = attnc.compile(os.path.join(args.src, "examples",
                                         "small_encoder.mlir"),
                            os.path.join(args.workdir, "libenc.so"),
                            no_approximate_math=True)
    weights = os.path.join(args.workdir, "enc.safetensors")
    import subprocess
    subprocess.run([sys.executable, os.path.join(args.src, "scripts",
                                                 "make_weights.py"),
                    "small_encoder", weights, "--inputs", args.workdir,
                    "--reference", os.path.join(args.workdir, "enc.ref.npy")],
                   check=True, stdout=subprocess.DEVNULL)
    enc = attnc.load(enc_lib, weights=weights)
    bert = attnc.load(lib)
    y = enc.run(np.load(os.path.join(args.workdir, "ids.npy")))["output0"]
    ref = np.load(os.path.join(args.workdir, "enc.ref.npy"))
    err = checkutil.rel_err(y, ref)
    assert err <= 1e-5, err
    yb = bert.run(input_ids=ids, attention_mask=mask)
    assert len(yb) == 1
    print("small_encoder: max rel err %.1e <= 1e-5, beside bert_like" % err)
    # Keyword options are attn-compile flags: the same f32 weights run an
    # f16 build (converted at bind time) with an f16 output.
    enc16_lib = attnc.compile(os.path.join(args.src, "examples",
                                           "small_encoder.mlir"),
                              os.path.join(args.workdir, "libenc16.so"),
                              precision="f16", io_precision="f16")
    enc16 = attnc.load(enc16_lib, weights=weights)
    y16 = enc16.run(np.load(os.path.join(args.workdir, "ids.npy")))["output0"]
    err16 = checkutil.rel_err(y16.astype(np.float64), ref)
    assert y16.dtype == np.float16 and err16 <= 4e-3, (y16.dtype, err16)
    print("small_encoder precision=f16: %s, max rel err %.1e <= 4e-3"
          % (y16.dtype, err16))
    enc16.close()
    enc.close()
    expect_error(lambda: enc.run(), "the model is closed")
    expect_error(lambda: attnc.load(enc_lib), "has 25 weights: pass weights=")
    expect_error(lambda: attnc.load(enc_lib, weights=lib),
                 "libbert.so")
    # A tokenizer (text_check.py tests text generation where the
    # `tokenizers` package is installed): a directory without
    # tokenizer.json, and the package missing (blocked here, whether
    # installed or not), are errors that say so.
    expect_error(lambda: attnc.load(lib, tokenizer=args.workdir),
                 "no tokenizer.json in")
    saved = {name: sys.modules.pop(name) for name in list(sys.modules)
             if name == "tokenizers" or name.startswith("tokenizers.")}
    sys.modules["tokenizers"] = None
    try:
        expect_error(lambda: attnc.load(lib, tokenizer=os.path.join(
            args.src, "test", "Frontend", "HF", "Inputs", "gpt2")),
            "needs Hugging Face's 'tokenizers' package")
    finally:
        del sys.modules["tokenizers"]
        sys.modules.update(saved)
    # Generation with a decoder checkpoint: greedy tokens equal
    # transformers' (scripts/gen_hf_generation.py), sampling is
    # reproducible by seed, an encoder is refused.
    gpt2, prompt, lengths, want = checkutil.load_gpt2(attnc, args.src,
                                                      args.workdir)
    with gpt2:
        got = gpt2.generate(prompt, 24, lengths=lengths)
        assert got.dtype == np.int64 and np.array_equal(got, want), got
        prefill_ms, decode_ms, steps = gpt2.last_generate_timing
        assert steps == 23, gpt2.last_generate_timing
        print("gpt2 generate: greedy tokens equal transformers'")
        sampled = [gpt2.generate(prompt, 8, lengths=lengths, temperature=1.0,
                                 top_k=10, seed=3) for _ in range(2)]
        assert np.array_equal(sampled[0], sampled[1])
        one_row = gpt2.generate(prompt[1], 4)
        assert np.array_equal(one_row, want[1:, :4]), one_row
        print("gpt2 sampling: reproducible by seed")
        expect_error(lambda: gpt2.generate(prompt, 40),
                     "exceed the model's 40 positions")
        expect_error(lambda: gpt2.generate(prompt, 2, top_p=0.0),
                     "top_p must be in (0, 1]")
    # The same library bound to a sharded checkpoint (three shards and
    # model.safetensors.index.json, as save_pretrained writes them): the
    # same greedy tokens as transformers; a missing shard is an error.
    hf = os.path.join(args.src, "test", "Frontend", "HF")
    sharded = os.path.join(args.workdir, "gpt2-sharded")
    subprocess.run([sys.executable, os.path.join(hf, "rewrite_checkpoint.py"),
                    os.path.join(hf, "Inputs", "gpt2"), sharded,
                    "--shards", "3"], check=True)
    index = os.path.join(sharded, "model.safetensors.index.json")
    gpt2_lib = os.path.join(args.workdir, "libgpt2.so")
    with attnc.load(gpt2_lib, weights=index) as gpt2:
        got = gpt2.generate(prompt, 24, lengths=lengths)
        assert np.array_equal(got, want), got
        print("gpt2 from a shard index: greedy tokens equal transformers'")
    os.remove(os.path.join(sharded, "model-00002-of-00003.safetensors"))
    expect_error(lambda: attnc.load(gpt2_lib, weights=index),
                 "model-00002-of-00003.safetensors: cannot open")
    # Phi-3 with LongRoPE as a KV-cache step: generation recomputes the
    # sequence once past original_max_position_embeddings (12), as
    # transformers' generate does, so each prompt alone gives its greedy
    # tokens (scripts/gen_hf_families.py).
    phi3_dir = os.path.join(hf, "Inputs", "phi3_longrope")
    phi3_lib = attnc.compile(phi3_dir, os.path.join(args.workdir,
                                                    "libphi3.so"),
                             input_shape={"input_ids": (2, None)},
                             kv_cache=40)
    with attnc.load(phi3_lib,
                    weights=os.path.join(phi3_dir, "model.safetensors")) as phi3:
        prompt = np.load(os.path.join(phi3_dir, "generate_prompt.npy"))
        lengths = np.load(os.path.join(phi3_dir, "generate_lengths.npy"))
        want = np.load(os.path.join(phi3_dir, "generate_expected.npy"))
        for row, length in enumerate(lengths):
            got = phi3.generate(prompt[row, :length], 24)
            assert np.array_equal(got, want[row:row + 1]), (row, got)
        print("phi3 longrope generate: greedy tokens equal transformers' "
              "across the threshold")
    # An encoder-decoder (T5 v1.1 layout): the encoder input goes with
    # encoder_input_ids, the prompt is the decoder's start token; greedy
    # tokens equal transformers' (scripts/gen_hf_encdec.py).
    t5_dir = os.path.join(hf, "Inputs", "t5_gated")
    t5_lib = attnc.compile(t5_dir, os.path.join(args.workdir, "libt5.so"),
                           input_shape={"input_ids": (2, 10),
                                        "decoder_input_ids": (2, 17)})
    with attnc.load(t5_lib,
                    weights=os.path.join(t5_dir, "model.safetensors")) as t5:
        load = lambda name: np.load(os.path.join(t5_dir, name))
        start = load("generate_decoder_start.npy")
        got = t5.generate(start, 16,
                          encoder_input_ids=load("generate_input_ids.npy"))
        assert np.array_equal(got, load("generate_expected.npy")), got
        print("t5 generate: greedy tokens equal transformers'")
        expect_error(lambda: t5.generate(start, 16), "--encoder-input")
        expect_error(lambda: t5.generate(start, 16, encoder_input_ids=np.zeros(
            (2, 9), np.int64)), "encoder input: 9 tokens per row, but the "
            "model was compiled for 10")
    # Compiled with the encoder's attention_mask: shorter encoder rows.
    t5m_lib = attnc.compile(t5_dir, os.path.join(args.workdir, "libt5m.so"),
                            input_shape={"input_ids": (2, 10),
                                         "attention_mask": (2, 10),
                                         "decoder_input_ids": (2, 17)})
    with attnc.load(t5m_lib,
                    weights=os.path.join(t5_dir, "model.safetensors")) as t5:
        got = t5.generate(
            start, 16, encoder_input_ids=load("generate_padded_input_ids.npy"),
            encoder_lengths=load("generate_padded_lengths.npy"))
        assert np.array_equal(got, load("generate_padded_expected.npy")), got
        print("t5 generate, padded encoder rows: greedy tokens equal "
              "transformers'")
        expect_error(lambda: t5.generate(start, 2, encoder_lengths=[4, 5]),
                     "encoder_lengths needs encoder_input_ids")
    # With a KV cache the library holds the encoder (run once per prompt)
    # beside the decoder step; the same calls generate the same tokens, two
    # prompts in a row on one model.
    t5kv_lib = attnc.compile(t5_dir, os.path.join(args.workdir, "libt5kv.so"),
                             input_shape={"input_ids": (2, 10),
                                          "attention_mask": (2, 10),
                                          "decoder_input_ids": (2, None)},
                             kv_cache=24)
    with attnc.load(t5kv_lib,
                    weights=os.path.join(t5_dir, "model.safetensors")) as t5:
        for _ in range(2):
            got = t5.generate(
                start, 16,
                encoder_input_ids=load("generate_padded_input_ids.npy"),
                encoder_lengths=load("generate_padded_lengths.npy"))
            assert np.array_equal(got, load("generate_padded_expected.npy")), \
                got
            got = t5.generate(start, 16,
                              encoder_input_ids=load("generate_input_ids.npy"))
            assert np.array_equal(got, load("generate_expected.npy")), got
        print("t5 kv-cache step generate: greedy tokens equal transformers'")
        expect_error(lambda: t5.generate(start, 16), "--encoder-input")
    with attnc.load(lib) as bert:
        expect_error(lambda: bert.generate(ids, 2),
                     "not a causal language model")
    # Compile errors carry the compiler's located diagnostic.
    broken = os.path.join(args.workdir, "broken.mlir")
    with open(broken, "w") as f:
        f.write("func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
                "  %y = attn.layer_norm %x {epsilon = -1.0 : f64} : "
                "tensor<2x3xf32>\n  return %y : tensor<2x3xf32>\n}\n")
    expect_error(lambda: attnc.compile(broken), "broken.mlir:2:")
    print("PASS")


if __name__ == "__main__":
    main()
