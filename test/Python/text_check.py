#!/usr/bin/python3
"""Text in, text out with the attnc Python package: `attnc.load(...,
tokenizer=DIR)` and `Model.generate_text` on the tiny GPT-2, T5 v1.1 and
BART checkpoints, whose tokenizer.json and text_expected.json come from
scripts/gen_hf_text.py: transformers' greedy continuations (its own
`generate`, each prompt alone) are the reference. Needs the `tokenizers`
package in the interpreter.

    text_check.py --src ATTNC_SRC --bin BUILD_BIN --workdir DIR
"""

import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reference"))
import checkutil  # noqa: E402
from api_check import expect_error  # noqa: E402


def text_expected(checkpoint):
    """The checkpoint's text_expected.json (scripts/gen_hf_text.py)."""
    with open(os.path.join(checkpoint, "text_expected.json")) as f:
        return json.load(f)


def main():
    args, attnc = checkutil.attnc_check()
    inputs = os.path.join(args.src, "test", "Frontend", "HF", "Inputs")
    lib_path = lambda name: os.path.join(args.workdir, name)

    def encoder_decoder(name, lib):
        """(text_expected.json, the checkpoint `name` compiled into `lib` for
        two rows of 10 encoder and 17 decoder positions, loaded with its
        tokenizer)."""
        d = os.path.join(inputs, name)
        compiled = attnc.compile(d, lib_path(lib),
                                 input_shape={"input_ids": (2, 10),
                                              "attention_mask": (2, 10),
                                              "decoder_input_ids": (2, 17)})
        return text_expected(d), attnc.load(
            compiled, weights=os.path.join(d, "model.safetensors"),
            tokenizer=d)

    # A decoder, re-run over its whole window (two rows of 40 positions) and
    # as a KV-cache step: greedy texts equal transformers'.
    gpt2_dir = os.path.join(inputs, "gpt2")
    weights = os.path.join(gpt2_dir, "model.safetensors")
    want = text_expected(gpt2_dir)
    prompts, new = want["prompts"], want["max_new_tokens"]
    full = attnc.compile(gpt2_dir, lib_path("libgpt2.so"),
                         input_shape={"input_ids": (2, 40)})
    step = attnc.compile(gpt2_dir, lib_path("libgpt2-kv.so"),
                         input_shape={"input_ids": (2, None)}, kv_cache=40)
    for tag, lib in (("full window", full), ("kv cache", step)):
        with attnc.load(lib, weights=weights, tokenizer=gpt2_dir) as gpt2:
            got = gpt2.generate_text(prompts, new)
            assert got == want["greedy"], (got, want["greedy"])
            print("gpt2 %s: greedy texts equal transformers'" % tag)
    gpt2 = attnc.load(full, weights=weights, tokenizer=gpt2_dir)
    print("generation config:", sorted(gpt2.generation_config.items()))
    one = gpt2.generate_text(prompts[1], new)
    assert one == want["greedy"][1], one
    prefill_ms, decode_ms, steps = gpt2.last_generate_timing
    assert steps == new - 1, gpt2.last_generate_timing
    print("gpt2 one prompt: a str, transformers' text")

    # The same tokens as Model.generate, the runtime's generation: greedy
    # and sampled alike (one sampler, one seed).
    encoded = [gpt2.tokenizer.encode(p).ids for p in prompts]
    ids = np.zeros((2, max(map(len, encoded))), np.int64)
    for row, e in enumerate(encoded):
        ids[row, :len(e)] = e
    lengths = [len(e) for e in encoded]
    for options in ({}, dict(temperature=1.0, top_k=20, top_p=0.9, seed=7)):
        tokens = gpt2.generate(ids, new, lengths=lengths, **options)
        texts = [gpt2.tokenizer.decode(row.tolist(), skip_special_tokens=True)
                 for row in tokens]
        assert gpt2.generate_text(prompts, new, **options) == texts
    print("gpt2: the tokens of Model.generate, greedy and sampled")

    # Sampling: the same seed gives the same texts, other seeds others;
    # top_k 1 is greedy.
    sample = lambda seed: gpt2.generate_text(prompts, new, temperature=1.0,
                                             top_p=0.95, seed=seed)
    assert sample(1) == sample(1)
    assert len({tuple(sample(seed)) for seed in (1, 2, 3)}) == 3
    assert gpt2.generate_text(prompts, new, temperature=0.7,
                              top_k=1) == want["greedy"]
    print("gpt2 sampling: reproducible by seed, seeds differ")

    # eos_token_id as a list in generation_config.json (a regular token
    # standing in for an end of text): the first row stops there, the
    # second runs on. The keyword does the same.
    eos = want["eos"]
    eos_dir = os.path.join(args.workdir, "gpt2-eos")
    os.makedirs(eos_dir, exist_ok=True)
    shutil.copy(os.path.join(gpt2_dir, "tokenizer.json"), eos_dir)
    with open(os.path.join(eos_dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos["eos_token_id"]}, f)
    with attnc.load(full, weights=weights, tokenizer=eos_dir) as stops_early:
        got = stops_early.generate_text(prompts, new)
        assert got == eos["texts"], (got, eos["texts"])
        # Both rows stop at their first token, the run at once (a regular
        # token's text stays, as transformers decodes it).
        assert stops_early.generate_text(prompts, new, eos_token_id=[
            88, 38]) == ["ion", "the"]
        assert stops_early.last_generate_timing[2] == 0
    assert gpt2.generate_text(prompts, new,
                              eos_token_id=eos["eos_token_id"]) == eos["texts"]
    assert gpt2.generate_text(prompts, new, eos_token_id=None) == \
        want["greedy"]
    print("gpt2 eos list: a row stops, the other goes on, as transformers'")

    # Stop strings: cut before the first one, as transformers'
    # stop_strings (one spans two tokens).
    stop = want["stop"]
    got = gpt2.generate_text(prompts, new, stop=stop["stop"])
    assert got == stop["texts"], (got, stop["texts"])
    print("gpt2 stop strings:", json.dumps(stop["stop"]), "texts equal "
          "transformers'")

    # What a server reports (generate_text_details) and token by token
    # (stream_text): the texts are generate_text's (transformers' when
    # greedy); the pieces of a stream, joined, are the text, and its last
    # item is the details, with or without stop strings and sampling.
    details = gpt2.generate_text_details(prompts, new)
    assert [d.text for d in details] == want["greedy"]
    assert [(d.prompt_tokens, d.completion_tokens, d.finish_reason)
            for d in details] == [(len(e), len(ids), "length") for e, ids in
                                  zip(encoded, want["greedy_ids"])], details
    details = gpt2.generate_text_details(prompts, new, stop=stop["stop"])
    assert [d.text for d in details] == stop["texts"]
    assert [d.finish_reason for d in details] == ["stop", "length"], details
    for options in ({}, dict(stop=stop["stop"]), dict(stop=["or", "bou"]),
                    dict(temperature=1.0, top_p=0.9, seed=3)):
        for prompt in prompts:
            want_one, = gpt2.generate_text_details([prompt], new, **options)
            *pieces, last = gpt2.stream_text(prompt, new, **options)
            assert all(isinstance(p, str) and p for p in pieces), pieces
            assert "".join(pieces) == want_one.text == last.text, (
                pieces, want_one)
            assert (last.completion_tokens, last.finish_reason) == (
                want_one.completion_tokens, want_one.finish_reason)
            if not options:
                assert len(pieces) == new, pieces  # one piece a token
    print("gpt2 generate_text_details and stream_text: the same texts, "
          "token by token")

    expect_error(lambda: gpt2.generate_text(prompts, 31),
                 "prompt 0: 10 tokens plus 31 new tokens exceed the model's "
                 "40 positions")
    expect_error(lambda: gpt2.generate_text(prompts, 2, top_p=0.0),
                 "top_p must be in (0, 1]")
    expect_error(lambda: gpt2.generate_text([prompts[0], 3], 2),
                 "prompts must be a str or a non-empty list of str")
    expect_error(lambda: gpt2.generate_text(prompts, 2, stop=[""]),
                 "stop must be a non-empty str")
    gpt2.close()
    expect_error(lambda: gpt2.generate_text(prompts, 2), "the model is closed")

    # An encoder-decoder: each prompt is the encoder's input (T5's
    # tokenizer appends </s>), the decoder starts with
    # decoder_start_token_id; three prompts on a model of two rows; the
    # first row ends with </s>, not in its text.
    want, t5 = encoder_decoder("t5_gated", "libt5.so")
    with t5:
        got = t5.generate_text(want["prompts"], want["max_new_tokens"])
        assert got == want["greedy"], (got, want["greedy"])
        print("t5 generate_text: greedy texts equal transformers'")
        got = t5.generate_text(want["prompts"], want["max_new_tokens"],
                               stop=want["stop"]["stop"])
        assert got == want["stop"]["texts"], (got, want["stop"]["texts"])
        print("t5 stop strings: texts equal transformers'")
        for prompt, text in zip(want["prompts"], want["greedy"]):
            *pieces, last = t5.stream_text(prompt, want["max_new_tokens"])
            assert "".join(pieces) == text == last.text, (pieces, text)
        print("t5 stream_text: the pieces joined are transformers' texts")
        expect_error(lambda: t5.generate_text("the quick brown fox jumps", 4),
                     "prompt 0 is 15 tokens; the model's encoder takes at "
                     "most 10")
        expect_error(lambda: t5.generate_text("thanks", 17),
                     "the decoder's start token plus 17 new tokens exceed "
                     "the model's 17 decoder positions")

    # BART: its tokenizer frames the encoder's text with <s> and </s>, its
    # generation config forces </s> as the last token (not in the text).
    want, bart = encoder_decoder("bart", "libbart.so")
    with bart:
        assert bart.generation_config["forced_eos_token_id"] == (2,)
        got = bart.generate_text(want["prompts"], want["max_new_tokens"])
        assert got == want["greedy"], (got, want["greedy"])
        print("bart generate_text, forced eos: greedy texts equal "
              "transformers'")

    # Load errors: a directory without tokenizer.json, a generation config
    # with a malformed id, no tokenizer at all.
    empty = os.path.join(args.workdir, "no-tokenizer")
    os.makedirs(empty, exist_ok=True)
    expect_error(lambda: attnc.load(full, weights=weights, tokenizer=empty),
                 "no tokenizer.json in")
    with open(os.path.join(eos_dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": "</s>"}, f)
    expect_error(lambda: attnc.load(full, weights=weights, tokenizer=eos_dir),
                 "generation_config.json's eos_token_id must be an int or a "
                 "list of ints")
    with attnc.load(full, weights=weights) as plain:
        expect_error(lambda: plain.generate_text("the", 2),
                     "generate_text needs a tokenizer")
    # Without the tokenizers package (blocked here): a message naming it.
    saved = {name: sys.modules.pop(name) for name in list(sys.modules)
             if name == "tokenizers" or name.startswith("tokenizers.")}
    sys.modules["tokenizers"] = None
    try:
        expect_error(lambda: attnc.load(full, weights=weights,
                                        tokenizer=gpt2_dir),
                     "needs Hugging Face's 'tokenizers' package")
    finally:
        del sys.modules["tokenizers"]
        sys.modules.update(saved)
    print("PASS")


if __name__ == "__main__":
    main()
