#!/usr/bin/env python3
"""Builds the tiny Hugging Face encoder-decoder checkpoints (T5, MT5, BART,
MBart) that test `attn-import --hf` / `attn-compile DIR`.

Made with transformers 5.23.0 and torch 2.15. Each model is constructed
from a config object with seeded random initialization (nothing is
downloaded), its weights widened (gen_hf_families.widen_weights), saved with
`save_pretrained` (config.json + model.safetensors + generation_config.json)
and run by transformers itself; its outputs are the independent reference
the compiled model is checked against:
  input_ids.npy [1, 12], decoder_input_ids.npy [1, 7]  -> expected.npy
  input_ids_2.npy [2, 9], decoder_input_ids_2.npy [2, 5] -> expected_2.npy
(the logits), and the greedy generation references:
  generate_input_ids.npy     int64 [2, 10] encoder prompts (no padding)
  generate_decoder_start.npy int64 [2, 1] decoder_start_token_id per row
  generate_expected.npy      int64 [2, 16] the new tokens of
                             `model.generate(do_sample=False)`, without the
                             leading start token
  generate_padded_input_ids.npy, generate_padded_lengths.npy,
  generate_padded_expected.npy  the same for rows of 6 and 10 tokens padded
                             to 10 with pad_token_id under attention_mask
Generation is plain greedy: one beam, no forced BOS/EOS, no n-gram ban,
no end-of-sequence token (all 16 tokens are real). It prints the smallest
gap between the best and second-best logit over the generation steps: a
near tie could flip under float rounding.

t5_gated is T5 v1.1 / MT5's layout: gated-GELU FFN and an untied LM head
without the d_model**-0.5 rescale. transformers 5 always ties T5's head
when it saves one, so the head is untied by hand here and saved as
lm_head.weight with the transformers 4 config key tie_word_embeddings
false, as T5 v1.1 checkpoints on the Hub have it.

  venv/bin/python scripts/gen_hf_encdec.py test/Frontend/HF/Inputs
The output is committed, so the tests need neither package.
"""

import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers as T
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_hf_families import checkpoint_summary, chosen_families  # noqa: E402
from gen_hf_families import widen_weights  # noqa: E402

VOCAB = 99
NEW_TOKENS = 16
SHAPES = (("", (1, 12), (1, 7)), ("_2", (2, 9), (2, 5)))
PROMPT = (2, 10)
PADDED_LENGTHS = [6, 10]

T5_COMMON = dict(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64,
                 num_layers=2, num_decoder_layers=2, num_heads=4,
                 # 8 buckets up to distance 16: sequences of 12 reach the
                 # logarithmic buckets and the clamp.
                 relative_attention_num_buckets=8,
                 relative_attention_max_distance=16, dropout_rate=0.0,
                 decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
BART_COMMON = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2,
                   decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=64,
                   decoder_ffn_dim=64, max_position_embeddings=32,
                   dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                   pad_token_id=1, bos_token_id=0, eos_token_id=2,
                   decoder_start_token_id=2)


def families():
    return {
        # Original T5: ReLU FFN, tied head with the d_model**-0.5 rescale.
        "t5": (T.T5Config, T.T5ForConditionalGeneration,
               dict(T5_COMMON, feed_forward_proj="relu")),
        # T5 v1.1 / MT5: gated GELU (gelu_new) FFN, untied head.
        "t5_gated": (T.T5Config, T.T5ForConditionalGeneration,
                     dict(T5_COMMON, feed_forward_proj="gated-gelu")),
        # MT5: gated GELU; transformers 5 ties its head (saved without
        # lm_head.weight) and never rescales the decoder output.
        "mt5": (T.MT5Config, T.MT5ForConditionalGeneration, dict(T5_COMMON)),
        # Post-LN, GELU, scaled embeddings, learned positions offset 2.
        "bart": (T.BartConfig, T.BartForConditionalGeneration,
                 dict(BART_COMMON, scale_embedding=True)),
        # Pre-LN with final LayerNorms on both sides, unscaled embeddings.
        "mbart": (T.MBartConfig, T.MBartForConditionalGeneration,
                  dict(BART_COMMON, activation_function="relu",
                       scale_embedding=False)),
    }


def build(name, cfg_class, model_class, over):
    torch.manual_seed(1234)
    model = model_class(cfg_class(**over))
    if name == "t5_gated":
        # An untied head, and no rescale of the decoder output (T5 v1.1).
        model.lm_head = torch.nn.Linear(over["d_model"], VOCAB, bias=False)
        torch.nn.init.normal_(model.lm_head.weight, std=1.0 / 8.0)
        model.config.scale_decoder_outputs = False
    # T5 scores are not scaled by 1/sqrt(d_kv): widened by 8 as the other
    # families are, its float32 logits drift from float64 ones by 1e-4
    # relative, the tests' tolerance.
    widen_weights(model, 2.0 if "t5" in name else 8.0)
    if hasattr(model, "final_logits_bias"):
        with torch.no_grad():
            model.final_logits_bias.copy_(
                0.5 * torch.randn_like(model.final_logits_bias))
    return model.eval()


def save(name, model, dest):
    model.save_pretrained(dest)
    if name != "t5_gated":
        return
    path = os.path.join(dest, "model.safetensors")
    tensors = load_file(path)
    tensors["lm_head.weight"] = model.lm_head.weight.detach().contiguous()
    save_file(tensors, path, metadata={"format": "pt"})
    cfg_path = os.path.join(dest, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg.pop("scale_decoder_outputs", None)
    cfg["tie_word_embeddings"] = False
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


def generate(model, dest, padded=False):
    """Greedy references: full encoder rows, or (padded) rows of
    PADDED_LENGTHS tokens padded with pad_token_id under attention_mask."""
    rng = np.random.default_rng(4321 if padded else 1234)
    prompt = rng.integers(3, VOCAB, size=PROMPT, dtype=np.int64)
    mask = np.ones(PROMPT, dtype=np.int64)
    if padded:
        for row, length in enumerate(PADDED_LENGTHS):
            prompt[row, length:] = model.config.pad_token_id
            mask[row, length:] = 0
    start = model.config.decoder_start_token_id
    ids = torch.from_numpy(prompt)
    with torch.no_grad():
        out = model.generate(
            ids, attention_mask=torch.from_numpy(mask),
            decoder_input_ids=torch.full((PROMPT[0], 1), start),
            max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
            do_sample=False, num_beams=1, no_repeat_ngram_size=0,
            repetition_penalty=1.0, forced_bos_token_id=None,
            forced_eos_token_id=None, eos_token_id=None,
            output_scores=True, return_dict_in_generate=True)
    expected = out.sequences[:, 1:].numpy()
    assert expected.shape == (PROMPT[0], NEW_TOKENS), expected.shape
    min_gap = float("inf")
    for scores in out.scores:
        top2 = torch.topk(scores, 2, dim=-1).values
        min_gap = min(min_gap, float((top2[:, 0] - top2[:, 1]).min()))
    if padded:
        np.save(os.path.join(dest, "generate_padded_input_ids.npy"), prompt)
        np.save(os.path.join(dest, "generate_padded_lengths.npy"),
                np.array(PADDED_LENGTHS, dtype=np.int64))
        np.save(os.path.join(dest, "generate_padded_expected.npy"),
                expected.astype(np.int64))
        return expected, min_gap
    np.save(os.path.join(dest, "generate_input_ids.npy"), prompt)
    np.save(os.path.join(dest, "generate_decoder_start.npy"),
            np.full((PROMPT[0], 1), start, dtype=np.int64))
    np.save(os.path.join(dest, "generate_expected.npy"),
            expected.astype(np.int64))
    return expected, min_gap


def main():
    out_dir, chosen = chosen_families(__doc__, families())
    print(f"transformers {T.__version__}, torch {torch.__version__}")
    for name, (cfg_class, model_class, over) in chosen:
        model = build(name, cfg_class, model_class, over)
        dest = os.path.join(out_dir, name)
        shutil.rmtree(dest, ignore_errors=True)
        save(name, model, dest)
        rng = np.random.default_rng(7)
        logit_gap = float("inf")
        for suffix, src, tgt in SHAPES:
            ids = rng.integers(3, VOCAB, size=src, dtype=np.int64)
            dec = rng.integers(3, VOCAB, size=tgt, dtype=np.int64)
            with torch.no_grad():
                logits = model(input_ids=torch.from_numpy(ids),
                               decoder_input_ids=torch.from_numpy(dec)).logits
            top2 = torch.topk(logits, 2, dim=-1).values
            logit_gap = min(logit_gap,
                            float((top2[..., 0] - top2[..., 1]).min()))
            np.save(os.path.join(dest, f"input_ids{suffix}.npy"), ids)
            np.save(os.path.join(dest, f"decoder_input_ids{suffix}.npy"), dec)
            np.save(os.path.join(dest, f"expected{suffix}.npy"),
                    logits.numpy().astype(np.float32))
        expected, gap = generate(model, dest)
        _, padded_gap = generate(model, dest, padded=True)
        gap = min(gap, padded_gap)
        print(f"{checkpoint_summary(name, dest)}, max|logit| "
              f"{float(np.abs(np.load(os.path.join(dest, 'expected.npy'))).max()):.3g}, "
              f"generate {expected.tolist()} min top-2 gap {gap:.3g}")


if __name__ == "__main__":
    main()
