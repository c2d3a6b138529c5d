#!/usr/bin/env python3
"""Builds the tiny Hugging Face checkpoints of the families beyond BERT,
GPT-2 and LLaMA that test `attn-import --hf` / `attn-compile DIR`.

Made with transformers 5.23.0 and torch 2.15 (the checkpoints of
scripts/gen_hf_checkpoints.py, bert/gpt2/llama, were made with transformers
4.40 and are left as they are). Each model is constructed from a config
object with random initialization (nothing is downloaded), saved with
`save_pretrained` (config.json + model.safetensors) and run by transformers
itself; its outputs are the independent reference the compiled model is
checked against:
  input_ids.npy / expected.npy       [1, 16] ids, logits or last hidden state
  input_ids_2.npy / expected_2.npy   [2, 7], a second shape
and for the decoders, as scripts/gen_hf_generation.py writes them:
  generate_prompt.npy    int64 [2, 9], row 0 uses its first 5 tokens
  generate_lengths.npy   int64 [2]
  generate_expected.npy  int64 [2, 24], greedy new tokens of
                         `model.generate(do_sample=False)` on each row alone
It prints the smallest gap between the best and second-best logit over the
generation steps: a near tie could flip under float rounding.

  python -m venv venv && venv/bin/pip install torch==2.15.0 transformers==5.23.0
  venv/bin/python scripts/gen_hf_families.py test/Frontend/HF/Inputs
The output is committed, so the tests need neither package.
"""

import argparse
import json
import os
import shutil

import numpy as np
import torch
import transformers as T

VOCAB = 99
NEW_TOKENS = 24
LENGTHS = [5, 9]
COMMON = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
              num_attention_heads=4, intermediate_size=64)


def llama_rope(max_positions, **rope):
    """A LLaMA of grouped-query attention with these rope_parameters."""
    return (T.LlamaConfig, T.LlamaForCausalLM,
            dict(num_key_value_heads=2, max_position_embeddings=max_positions,
                 rope_parameters=dict(rope_theta=10000.0, **rope)))


def decoders():
    return {
        # Sliding window 5, shorter than the sequences: the window matters.
        "mistral": (T.MistralConfig, T.MistralForCausalLM,
                    dict(num_key_value_heads=2, sliding_window=5,
                         max_position_embeddings=64)),
        # Query/key/value biases; layer 1 sliding (window 6), layer 0 not.
        "qwen2": (T.Qwen2Config, T.Qwen2ForCausalLM,
                  dict(num_key_value_heads=2, use_sliding_window=True,
                       sliding_window=6, max_window_layers=1,
                       max_position_embeddings=64)),
        # q/k norms; head_dim 16 is not hidden_size / heads.
        "qwen3": (T.Qwen3Config, T.Qwen3ForCausalLM,
                  dict(num_key_value_heads=2, head_dim=16,
                       max_position_embeddings=64)),
        # (1 + w) norms, scaled embedding, GELU-tanh gate, MQA, tied head.
        "gemma": (T.GemmaConfig, T.GemmaForCausalLM,
                  dict(num_key_value_heads=1, head_dim=16,
                       max_position_embeddings=64)),
        # Gemma's and post-attention / around-FFN norms, score scale
        # 24^-1/2, layer 0 sliding (window 4), soft-capped logits; no
        # attention soft-capping (attn.sdpa has none).
        "gemma2": (T.Gemma2Config, T.Gemma2ForCausalLM,
                   dict(num_key_value_heads=2, head_dim=16,
                        query_pre_attn_scalar=24, sliding_window=4,
                        attn_logit_softcapping=None,
                        final_logit_softcapping=3.0,
                        max_position_embeddings=64)),
        # Embeddings of width 16 projected in and out; positions offset 2.
        "opt": (T.OPTConfig, T.OPTForCausalLM,
                dict(ffn_dim=64, word_embed_proj_dim=16,
                     max_position_embeddings=64, dropout=0.0,
                     attention_dropout=0.0)),
        # Interleaved fused QKV, rotary on half of each head, parallel
        # residual.
        "gpt_neox": (T.GPTNeoXConfig, T.GPTNeoXForCausalLM,
                     dict(rope_parameters={"rope_type": "default",
                                           "rope_theta": 10000.0,
                                           "partial_rotary_factor": 0.5},
                          max_position_embeddings=64)),
        # Parallel attention + MLP, partial rotary, LM head bias.
        "phi": (T.PhiConfig, T.PhiForCausalLM,
                dict(max_position_embeddings=64)),
        # Fused qkv_proj and gate_up_proj, rotary on 3/4 of each head,
        # sliding window 6.
        "phi3": (T.Phi3Config, T.Phi3ForCausalLM,
                 dict(num_key_value_heads=2, sliding_window=6,
                      rope_parameters={"rope_type": "default",
                                       "rope_theta": 10000.0,
                                       "partial_rotary_factor": 0.75},
                      max_position_embeddings=64,
                      original_max_position_embeddings=64,
                      pad_token_id=0)),
        # The new decoder architecture: grouped query_key_value (2 kv
        # groups of 2 query heads), ln_attn and ln_mlp in parallel.
        "falcon": (T.FalconConfig, T.FalconForCausalLM,
                   dict(new_decoder_architecture=True, num_kv_heads=2,
                        ffn_hidden_size=64, bias=True,
                        max_position_embeddings=64)),
        # Falcon-7B's layout: multi-query (one key and value head after the
        # query heads), one LayerNorm for the parallel attention and FFN.
        "falcon_mq": (T.FalconConfig, T.FalconForCausalLM,
                      dict(new_decoder_architecture=False, multi_query=True,
                           parallel_attn=True, ffn_hidden_size=64,
                           max_position_embeddings=64)),
        # Scaled rotary positions (head width 8: frequencies 1, 0.1, 0.01,
        # 0.001). Linear: every frequency divided by 4.
        "llama_rope_linear": llama_rope(64, rope_type="linear", factor=4.0),
        # llama3: wavelengths below 8 kept, above 64 divided by 4, the one
        # between smoothed.
        "llama_rope_llama3": llama_rope(
            64, rope_type="llama3", factor=4.0, low_freq_factor=1.0,
            high_freq_factor=8.0, original_max_position_embeddings=64),
        # YaRN: the highest frequency kept, the others interpolated, cos and
        # sin scaled by 0.1 ln 4 + 1.
        "llama_rope_yarn": llama_rope(
            128, rope_type="yarn", factor=4.0,
            original_max_position_embeddings=32),
        # Dynamic NTK past a context of 12 positions: the [1, 16] run and
        # the decode steps past 12 grow the base with the length, the
        # [2, 7] run and both prompts keep it.
        "llama_rope_dynamic": llama_rope(12, rope_type="dynamic", factor=2.0),
        # LongRoPE (Phi-3) with rotary on 3/4 of each head (3 pairs): the
        # short factors up to 12 positions, the long ones past that, cos
        # and sin scaled by sqrt(1 + ln(64 / 12) / ln 12).
        "phi3_longrope": (T.Phi3Config, T.Phi3ForCausalLM,
                          dict(num_key_value_heads=2,
                               rope_parameters={
                                   "rope_type": "longrope",
                                   "rope_theta": 10000.0,
                                   "partial_rotary_factor": 0.75,
                                   "short_factor": [1.0, 1.25, 1.5],
                                   "long_factor": [2.0, 3.0, 4.0]},
                               max_position_embeddings=64,
                               original_max_position_embeddings=12,
                               pad_token_id=0)),
        # ALiBi with 6 heads (not a power of two: the interleaved extra
        # slopes); interleaved fused QKV; tied head.
        "bloom": (T.BloomConfig, T.BloomForCausalLM,
                  dict(hidden_size=36, n_layer=2, n_head=6,
                       hidden_dropout=0.0, attention_dropout=0.0)),
    }


def encoders():
    return {
        "roberta": (T.RobertaConfig, T.RobertaModel,
                    dict(max_position_embeddings=40, type_vocab_size=1,
                         hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0)),
        "distilbert": (T.DistilBertConfig, T.DistilBertModel,
                       dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                            max_position_embeddings=40, dropout=0.0,
                            attention_dropout=0.0)),
        "electra": (T.ElectraConfig, T.ElectraModel,
                    dict(embedding_size=16, max_position_embeddings=40,
                         hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0)),
        # Relative position buckets (sequences of 16: exact and
        # logarithmic buckets), RoBERTa's positions.
        "mpnet": (T.MPNetConfig, T.MPNetModel,
                  dict(max_position_embeddings=40,
                       relative_attention_num_buckets=32,
                       hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)),
        # 4 layers in 2 shared groups.
        "albert": (T.AlbertConfig, T.AlbertModel,
                   dict(embedding_size=16, num_hidden_layers=4,
                        num_hidden_groups=2, max_position_embeddings=40)),
    }


def build(cfg_class, model_class, over):
    kw = dict(COMMON)
    if cfg_class in (T.DistilBertConfig, T.BloomConfig):
        kw = dict(vocab_size=VOCAB)
    if cfg_class is T.FalconConfig:
        kw.pop("intermediate_size")
    kw.update(over)
    torch.manual_seed(1234)
    model = model_class(cfg_class(**kw))
    widen_weights(model)
    return model.eval()


def widen_weights(model, factor=8.0):
    """Random init uses std 0.02; widens the weights (matrices times
    `factor`) so that the tests compare non-trivial activations (norm
    weights move off 1, or off 0 for Gemma's (1 + w) norms). Draws from
    torch's current seed."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(factor)
            else:
                p.add_(0.1 * torch.randn_like(p))


def generate(model, dest, first_id=3, vocab=VOCAB, stop_at_eos=False):
    """transformers' greedy continuation (`model.generate`, NEW_TOKENS
    tokens, past the model's eos token unless `stop_at_eos`) of each row
    of a seeded prompt of ids in [first_id, vocab), LENGTHS[row] tokens
    long, alone (no padding). Saves generate_{prompt,lengths,expected}.npy
    under `dest`; returns the new tokens and the smallest top-2 logit gap
    over all steps (a near tie could flip under float rounding)."""
    no_stop = {} if stop_at_eos else dict(min_new_tokens=NEW_TOKENS,
                                          eos_token_id=None)
    rng = np.random.default_rng(1234)
    prompt = rng.integers(first_id, vocab, size=(len(LENGTHS), max(LENGTHS)),
                          dtype=np.int64)
    expected = np.zeros((len(LENGTHS), NEW_TOKENS), dtype=np.int64)
    min_gap = float("inf")
    for row, length in enumerate(LENGTHS):
        ids = torch.from_numpy(prompt[row:row + 1, :length])
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids),
                                 max_new_tokens=NEW_TOKENS, do_sample=False,
                                 output_scores=True,
                                 return_dict_in_generate=True, pad_token_id=0,
                                 **no_stop)
        expected[row] = out.sequences[0, length:].numpy()
        for scores in out.scores:
            top2 = torch.topk(scores[0], 2).values
            min_gap = min(min_gap, float(top2[0] - top2[1]))
    np.save(os.path.join(dest, "generate_prompt.npy"), prompt)
    np.save(os.path.join(dest, "generate_lengths.npy"),
            np.array(LENGTHS, dtype=np.int64))
    np.save(os.path.join(dest, "generate_expected.npy"), expected)
    return expected, min_gap


def decode_loop(model, dest):
    """Greedy tokens of a plain KV-cache loop over `model(...)`, each row
    alone: for Phi-3's longrope, whose `generate` recomputes the whole cache
    once the length first passes original_max_position_embeddings (its
    prepare_inputs_for_generation), while the forward keeps cached keys as
    they were rotated, as a decode step of one token must. Saved as
    decode_expected.npy."""
    prompt = np.load(os.path.join(dest, "generate_prompt.npy"))
    expected = np.zeros((len(LENGTHS), NEW_TOKENS), dtype=np.int64)
    for row, length in enumerate(LENGTHS):
        ids = torch.from_numpy(prompt[row:row + 1, :length])
        cache = T.DynamicCache(config=model.config)
        with torch.no_grad():
            for step in range(NEW_TOKENS):
                out = model(input_ids=ids, past_key_values=cache,
                            use_cache=True)
                token = int(out.logits[0, -1].argmax())
                expected[row, step] = token
                ids = torch.tensor([[token]])
    np.save(os.path.join(dest, "decode_expected.npy"), expected)
    return expected


STEP_SPLITS = (11, 1, 4)


def step_pieces(model, dest):
    """Logits of input_ids.npy [1, 16] run in the pieces STEP_SPLITS over a
    KV cache (each piece at the cache's length, cached keys keeping their
    rotation): for the rotary types whose frequencies follow the run-time
    length, where the whole-sequence logits (expected.npy) rotate every key
    at the full length instead. Saved as step_expected.npy."""
    ids = torch.from_numpy(np.load(os.path.join(dest, "input_ids.npy")))
    cache = T.DynamicCache(config=model.config)
    pieces, start = [], 0
    with torch.no_grad():
        for t in STEP_SPLITS:
            out = model(input_ids=ids[:, start:start + t],
                        past_key_values=cache, use_cache=True)
            pieces.append(out.logits.numpy().astype(np.float32))
            start += t
    np.save(os.path.join(dest, "step_expected.npy"),
            np.concatenate(pieces, axis=1))


def chosen_families(doc, families):
    """The command line OUT_DIR [NAME ...] of a checkpoint builder (its
    description the first line of `doc`): (OUT_DIR, the (name, spec) items
    of `families` named there, all of them when none is)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    return args.out_dir, [(name, spec) for name, spec in families.items()
                          if not args.names or name in args.names]


def checkpoint_summary(name, dest):
    """NAME: the architectures of the checkpoint written to `dest` and its
    size in bytes."""
    with open(os.path.join(dest, "config.json")) as f:
        arch = json.load(f)["architectures"]
    size = sum(os.path.getsize(os.path.join(dest, f))
               for f in os.listdir(dest))
    return f"{name}: {arch} ({size} bytes)"


def main():
    out_dir, chosen = chosen_families(__doc__,
                                      dict(decoders(), **encoders()))
    print(f"transformers {transformers_version()}, torch {torch.__version__}")
    for name, (cfg_class, model_class, over) in chosen:
        decoder = name in decoders()
        model = build(cfg_class, model_class, over)
        dest = os.path.join(out_dir, name)
        shutil.rmtree(dest, ignore_errors=True)
        model.save_pretrained(dest)
        rng = np.random.default_rng(7)
        for suffix, shape in (("", (1, 16)), ("_2", (2, 7))):
            ids = rng.integers(3, VOCAB, size=shape, dtype=np.int64)
            if name in ("roberta", "mpnet"):
                # Padding ids (1) inside the rows: RoBERTa's positions skip
                # them.
                ids[0, 4] = 1
                ids[-1, -2] = 1
            with torch.no_grad():
                out = model(input_ids=torch.from_numpy(ids))
            y = out.logits if decoder else out.last_hidden_state
            np.save(os.path.join(dest, f"input_ids{suffix}.npy"), ids)
            np.save(os.path.join(dest, f"expected{suffix}.npy"),
                    y.numpy().astype(np.float32))
        extra = ""
        if decoder:
            expected, gap = generate(model, dest)
            extra = f", generate {expected.tolist()} min top-2 gap {gap:.3g}"
            if name == "phi3_longrope":
                extra += f", decode loop {decode_loop(model, dest).tolist()}"
            if name in ("llama_rope_dynamic", "phi3_longrope"):
                step_pieces(model, dest)
        print(checkpoint_summary(name, dest) + extra)


def transformers_version():
    return T.__version__


if __name__ == "__main__":
    main()
