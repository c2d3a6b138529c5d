"""Malformed Hugging Face checkpoints for `attn-import --hf DIR`: unknown
architectures, missing or invalid config.json keys, missing tensors, shapes
and dtypes that disagree with the config, broken safetensors files and shard
indexes, bad --input-shape values. Every case expects a located error
naming the key or tensor, a non-zero exit and no output file.

The checkpoints are tiny (GPT-2, BERT, LLaMA and the other families with
width 8) and built here:
config.json text and safetensors bytes (zeros; only headers matter)."""

import json
import struct

D, V, P, HEADS = 8, 11, 16, 2


def safetensors(tensors, dtypes=None):
    """safetensors bytes for {name: shape} (F32 zeros unless dtypes says)."""
    dtypes = dtypes or {}
    header, offset = {}, 0
    for name, shape in tensors.items():
        dtype = dtypes.get(name, "F32")
        size = (2 if dtype in ("F16", "BF16") else 4)
        for d in shape:
            size *= d
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(offset)


def gpt2_config(**over):
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
           "vocab_size": V, "n_embd": D, "n_layer": 1, "n_head": HEADS,
           "n_positions": P, "n_inner": None, "activation_function": "gelu_new",
           "layer_norm_epsilon": 1e-5}
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v != "<drop>"}


def gpt2_tensors():
    t = {"transformer.wte.weight": (V, D), "transformer.wpe.weight": (P, D),
         "transformer.ln_f.weight": (D,), "transformer.ln_f.bias": (D,)}
    p = "transformer.h.0."
    t.update({p + "ln_1.weight": (D,), p + "ln_1.bias": (D,),
              p + "attn.c_attn.weight": (D, 3 * D), p + "attn.c_attn.bias": (3 * D,),
              p + "attn.c_proj.weight": (D, D), p + "attn.c_proj.bias": (D,),
              p + "ln_2.weight": (D,), p + "ln_2.bias": (D,),
              p + "mlp.c_fc.weight": (D, 4 * D), p + "mlp.c_fc.bias": (4 * D,),
              p + "mlp.c_proj.weight": (4 * D, D), p + "mlp.c_proj.bias": (D,)})
    return t


def bert_config(**over):
    cfg = {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": V,
           "hidden_size": D, "num_hidden_layers": 1, "num_attention_heads": HEADS,
           "intermediate_size": 2 * D, "max_position_embeddings": P,
           "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
           "position_embedding_type": "absolute"}
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v != "<drop>"}


def bert_tensors():
    t = {"embeddings.word_embeddings.weight": (V, D),
         "embeddings.position_embeddings.weight": (P, D),
         "embeddings.token_type_embeddings.weight": (2, D),
         "embeddings.LayerNorm.weight": (D,), "embeddings.LayerNorm.bias": (D,)}
    p = "encoder.layer.0."
    for n in ("query", "key", "value"):
        t[p + f"attention.self.{n}.weight"] = (D, D)
        t[p + f"attention.self.{n}.bias"] = (D,)
    t.update({p + "attention.output.dense.weight": (D, D),
              p + "attention.output.dense.bias": (D,),
              p + "attention.output.LayerNorm.weight": (D,),
              p + "attention.output.LayerNorm.bias": (D,),
              p + "intermediate.dense.weight": (2 * D, D),
              p + "intermediate.dense.bias": (2 * D,),
              p + "output.dense.weight": (D, 2 * D), p + "output.dense.bias": (D,),
              p + "output.LayerNorm.weight": (D,), p + "output.LayerNorm.bias": (D,)})
    return t


def llama_config(**over):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
           "vocab_size": V, "hidden_size": D, "intermediate_size": 3 * D,
           "num_hidden_layers": 1, "num_attention_heads": HEADS,
           "num_key_value_heads": 1, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
           "rope_scaling": None, "hidden_act": "silu", "tie_word_embeddings": False}
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v != "<drop>"}


def llama_tensors():
    dh = D // HEADS
    t = {"model.embed_tokens.weight": (V, D), "model.norm.weight": (D,),
         "lm_head.weight": (V, D)}
    p = "model.layers.0."
    t.update({p + "input_layernorm.weight": (D,),
              p + "self_attn.q_proj.weight": (D, D),
              p + "self_attn.k_proj.weight": (dh, D),
              p + "self_attn.v_proj.weight": (dh, D),
              p + "self_attn.o_proj.weight": (D, D),
              p + "post_attention_layernorm.weight": (D,),
              p + "mlp.gate_proj.weight": (3 * D, D),
              p + "mlp.up_proj.weight": (3 * D, D),
              p + "mlp.down_proj.weight": (D, 3 * D)})
    return t


def ckpt(config, tensors, dtypes=None):
    """The files of a checkpoint directory `ckpt/`."""
    return {"ckpt/config.json": json.dumps(config, indent=2),
            "ckpt/model.safetensors": safetensors(tensors, dtypes)}


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


CMD = ["{attn-import}", "--hf", "ckpt", "--input-shape", "input_ids=1x8",
       "-o", "out.mlir"]


def case(name, files, stderr, cmd=None, **extra):
    c = {"name": name, "files": files, "cmd": cmd or CMD, "exit": "nonzero",
         "stderr": stderr, "absent": ["out.mlir"], "timeout": 30}
    c.update(extra)
    return c


CFG = r"ckpt/config\.json:\d+:\d+: error: "
ST = r"ckpt/model\.safetensors:0:0: error: "


def family_config(arch, model_type, base, over):
    cfg = dict(base(), architectures=[arch], model_type=model_type)
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v != "<drop>"}


def llama_like(arch, model_type):
    """A config of a LLaMA-like family (transformers 5 rotary settings)."""
    def config(**over):
        base = dict(llama_config(), rope_theta="<drop>", rope_scaling="<drop>",
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
        return family_config(arch, model_type, lambda: base, over)
    return config


def neox_config(**over):
    return family_config("GPTNeoXForCausalLM", "gpt_neox", lambda: {
        "vocab_size": V, "hidden_size": D, "num_hidden_layers": 1,
        "num_attention_heads": HEADS, "intermediate_size": 4 * D,
        "layer_norm_eps": 1e-5, "hidden_act": "gelu", "use_parallel_residual": True,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.5}}, over)


def neox_tensors():
    t = {"gpt_neox.embed_in.weight": (V, D), "gpt_neox.final_layer_norm.weight": (D,),
         "gpt_neox.final_layer_norm.bias": (D,), "embed_out.weight": (V, D)}
    p = "gpt_neox.layers.0."
    t.update({p + "input_layernorm.weight": (D,), p + "input_layernorm.bias": (D,),
              p + "post_attention_layernorm.weight": (D,),
              p + "post_attention_layernorm.bias": (D,),
              p + "attention.query_key_value.weight": (3 * D, D),
              p + "attention.query_key_value.bias": (3 * D,),
              p + "attention.dense.weight": (D, D), p + "attention.dense.bias": (D,),
              p + "mlp.dense_h_to_4h.weight": (4 * D, D),
              p + "mlp.dense_h_to_4h.bias": (4 * D,),
              p + "mlp.dense_4h_to_h.weight": (D, 4 * D),
              p + "mlp.dense_4h_to_h.bias": (D,)})
    return t


def opt_config(**over):
    return family_config("OPTForCausalLM", "opt", lambda: {
        "vocab_size": V, "hidden_size": D, "num_hidden_layers": 1,
        "num_attention_heads": HEADS, "ffn_dim": 2 * D, "max_position_embeddings": P,
        "word_embed_proj_dim": D, "do_layer_norm_before": True,
        "activation_function": "relu"}, over)


def phi_config(**over):
    return family_config("PhiForCausalLM", "phi", lambda: {
        "vocab_size": V, "hidden_size": D, "intermediate_size": 2 * D,
        "num_hidden_layers": 1, "num_attention_heads": HEADS,
        "hidden_act": "gelu_new", "qk_layernorm": False, "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                            "partial_rotary_factor": 0.5}}, over)


def bert_like(arch, model_type, **extra):
    def config(**over):
        return family_config(arch, model_type, lambda: dict(bert_config(), **extra), over)
    return config


def distilbert_config(**over):
    return family_config("DistilBertModel", "distilbert", lambda: {
        "vocab_size": V, "dim": D, "n_layers": 1, "n_heads": HEADS,
        "hidden_dim": 2 * D, "max_position_embeddings": P, "activation": "gelu"}, over)


FAMILIES = {"gpt2": (gpt2_config, gpt2_tensors), "bert": (bert_config, bert_tensors),
            "llama": (llama_config, llama_tensors),
            # Config errors come before any tensor is read.
            "mistral": (llama_like("MistralForCausalLM", "mistral"), llama_tensors),
            "qwen2": (llama_like("Qwen2ForCausalLM", "qwen2"), llama_tensors),
            "gemma": (llama_like("GemmaForCausalLM", "gemma"), llama_tensors),
            "phi3": (llama_like("Phi3ForCausalLM", "phi3"), llama_tensors),
            "gemma2": (llama_like("Gemma2ForCausalLM", "gemma2"), llama_tensors),
            "neox": (neox_config, neox_tensors), "opt": (opt_config, gpt2_tensors),
            "phi": (phi_config, gpt2_tensors),
            "roberta": (bert_like("RobertaModel", "roberta", pad_token_id=1), bert_tensors),
            "albert": (bert_like("AlbertModel", "albert", embedding_size=4,
                                 num_hidden_groups=1, inner_group_num=1), bert_tensors),
            "distilbert": (distilbert_config, bert_tensors),
            "falcon": (lambda **over: family_config("FalconForCausalLM", "falcon", lambda: {
                "vocab_size": V, "hidden_size": D, "num_hidden_layers": 1,
                "num_attention_heads": HEADS}, over), gpt2_tensors),
            "bloom": (lambda **over: family_config("BloomForCausalLM", "bloom", lambda: {
                "vocab_size": V, "hidden_size": D, "n_layer": 1, "n_head": HEADS}, over),
                gpt2_tensors)}


def cases():
    c = []
    # Architecture selection and config keys: (name, family, config.json
    # changes, the error located in config.json).
    for name, family, over, message in (
        # Encoder-decoders read their own config keys (a GPT-2 config lacks
        # them) and name both inputs.
        ("t5-reads-its-keys", "gpt2", {"architectures": ["T5ForConditionalGeneration"]},
         r'config\.json has no key "d_model", which this architecture needs'),
        ("bart-reads-its-keys", "gpt2", {"architectures": ["BartForConditionalGeneration"]},
         r'config\.json has no key "encoder_layers", which this architecture needs'),
        ("mbart-reads-its-keys", "gpt2", {"architectures": ["MBartForConditionalGeneration"]},
         r'config\.json has no key "decoder_ffn_dim", which this architecture needs'),
        ("marian-not-built", "gpt2", {"architectures": ["MarianMTModel"]},
         r'architecture "MarianMTModel" is an encoder-decoder whose sinusoidal positions \(sines in the first half of the channels, cosines in the second\) are not built yet'),
        ("whisper-not-built", "gpt2", {"architectures": ["WhisperForConditionalGeneration"]},
         r'architecture "WhisperForConditionalGeneration" is an audio encoder-decoder: its convolutional audio input is not built yet'),
        ("vit-reads-its-keys", "gpt2", {"architectures": ["ViTForImageClassification"]},
         r'config\.json has no key "hidden_size", which this architecture needs'),
        ("clip-text-reads-its-keys", "gpt2", {"architectures": ["CLIPTextModel"]},
         r'config\.json has no key "hidden_size", which this architecture needs'),
        ("vit-variant-not-built", "gpt2", {"architectures": ["ViTMAEModel"]},
         r'architecture "ViTMAEModel" is a ViT variant that is not built yet \(ViTModel and ViTForImageClassification are\)'),
        ("deit-not-built", "gpt2", {"architectures": ["DeiTForImageClassification"]},
         r'architecture "DeiTForImageClassification" is a vision transformer with a distillation token, which is not built yet'),
        ("clip-not-built", "gpt2", {"architectures": ["CLIPModel"]},
         r'architecture "CLIPModel" is a CLIP class that is not built yet \(its towers, CLIPVisionModel and CLIPTextModel, are; the dual-encoder CLIPModel and the projection heads are not\)'),
        ("family-prefix-is-a-word", "gpt2", {"architectures": ["Bartpho"]},
         r'unsupported architecture "Bartpho"; supported: BertModel'),
        ("unknown-architecture", "gpt2", {"architectures": ["XLNetLMHeadModel"]},
         r'unsupported architecture "XLNetLMHeadModel"; supported: BertModel, RobertaModel, DistilBertModel, ElectraModel, AlbertModel, MPNetModel, GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GemmaForCausalLM, Gemma2ForCausalLM, OPTForCausalLM, GPTNeoXForCausalLM, PhiForCausalLM, Phi3ForCausalLM, BloomForCausalLM, FalconForCausalLM, T5ForConditionalGeneration, MT5ForConditionalGeneration, BartForConditionalGeneration, MBartForConditionalGeneration, ViTModel, ViTForImageClassification, CLIPVisionModel, CLIPTextModel'),
        ("base-model-class-not-supported", "gpt2", {"architectures": ["GPT2Model"]},
         r'unsupported architecture "GPT2Model"'),
        ("no-architectures", "gpt2", {"architectures": "<drop>"}, r'config\.json has no key "architectures"'),
        ("architectures-not-a-list", "gpt2", {"architectures": "GPT2LMHeadModel"},
         r'config\.json key "architectures" must be a list of one class name'),
        ("architectures-two-classes", "gpt2", {"architectures": ["GPT2LMHeadModel", "BertModel"]},
         r'config\.json key "architectures" must be a list of one class name'),
        ("gpt2-missing-n_embd", "gpt2", {"n_embd": "<drop>"},
         r'config\.json has no key "n_embd", which this architecture needs'),
        ("gpt2-n_head-string", "gpt2", {"n_head": "two"}, r'config\.json key "n_head" must be an integer'),
        ("gpt2-n_layer-zero", "gpt2", {"n_layer": 0},
         r'config\.json key "n_layer" must be in \[1, 16777216\], got 0'),
        ("gpt2-n_embd-huge", "gpt2", {"n_embd": 1 << 40},
         r'config\.json key "n_embd" must be in \[1, 16777216\]'),
        ("gpt2-heads-do-not-divide", "gpt2", {"n_head": 3}, r'n_embd 8 is not divisible by n_head 3'),
        ("gpt2-epsilon-not-a-number", "gpt2", {"layer_norm_epsilon": "small"},
         r'config\.json key "layer_norm_epsilon" must be a finite number'),
        ("gpt2-unknown-activation", "gpt2", {"activation_function": "quick_gelu"},
         r'config\.json key "activation_function" is "quick_gelu"; supported activations'),
        ("gpt2-cross-attention", "gpt2", {"add_cross_attention": True},
         r'GPT-2 with cross-attention \(add_cross_attention\) is not supported'),
        ("gpt2-tie-flag-not-bool", "gpt2", {"tie_word_embeddings": "yes"},
         r'config\.json key "tie_word_embeddings" must be true or false'),
        ("bert-missing-intermediate_size", "bert", {"intermediate_size": "<drop>"},
         r'config\.json has no key "intermediate_size", which this architecture needs'),
        ("bert-relative-positions", "bert", {"position_embedding_type": "relative_key"},
         r'config\.json key "position_embedding_type" is "relative_key"; only "absolute"'),
        ("bert-unknown-activation", "bert", {"hidden_act": "gelu_10"},
         r'config\.json key "hidden_act" is "gelu_10"'),
        ("bert-decoder", "bert", {"is_decoder": True}, r'BertModel as a decoder'),
        ("llama-rope-dynamic-no-factor", "llama", {"rope_scaling": {"type": "dynamic"}},
         r'config\.json key "rope_scaling" has rope_type "dynamic" but no "factor"'),
        ("llama-rope-linear-no-factor", "llama", {"rope_scaling": {"type": "linear"}},
         r'config\.json key "rope_scaling" has rope_type "linear" but no "factor"'),
        ("llama-kv-heads-do-not-divide", "llama", {"num_key_value_heads": 3},
         r'num_attention_heads 2 is not a multiple of num_key_value_heads 3'),
        ("llama-odd-head-dim", "llama", {"head_dim": 3}, r'the head width 3 is odd'),
        ("llama-negative-rope-theta", "llama", {"rope_theta": -1.0},
         r'config\.json key "rope_theta" must be positive'),
        # transformers 5's rope_parameters: scaled or unknown settings.
        ("mistral-rope-longrope-no-factors", "mistral",
         {"rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "factor": 4.0}},
         r'config\.json key "rope_parameters" has rope_type "longrope" but no "short_factor"'),
        ("mistral-rope-longrope-factor-not-a-list", "mistral",
         {"rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                              "short_factor": [1.0], "long_factor": "long"}},
         r'config\.json key "rope_parameters\.long_factor" must be a non-empty list of positive numbers'),
        ("mistral-rope-unknown-type", "mistral",
         {"rope_parameters": {"rope_type": "ntk-by-parts", "rope_theta": 10000.0}},
         r'config\.json key "rope_parameters\.rope_type" is "ntk-by-parts", which attnc does not know'),
        ("qwen2-rope-llama3-negative-band", "qwen2",
         {"rope_parameters": {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                              "low_freq_factor": -1.0, "high_freq_factor": 4.0}},
         r'config\.json key "rope_parameters\.low_freq_factor" must be a number in \(0, inf\)'),
        ("qwen2-rope-llama3-equal-bands", "qwen2",
         {"rope_parameters": {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                              "low_freq_factor": 4.0, "high_freq_factor": 4.0}},
         r'config\.json key "rope_parameters\.high_freq_factor" must exceed low_freq_factor'),
        ("qwen2-rope-unknown-key", "qwen2",
         {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1]}},
         r'config\.json key "rope_parameters\.mrope_section" is not supported with rope_type "default" for this architecture'),
        ("mistral-rope-partial-not-supported", "mistral",
         {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                              "partial_rotary_factor": 0.5}},
         r'config\.json key "rope_parameters\.partial_rotary_factor" is not supported'),
        ("phi3-rope-longrope-factor-count", "phi3",
         {"rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                              "short_factor": [1.0], "long_factor": [1.0]},
          "max_position_embeddings": 64},
         r'config\.json key "rope_parameters\.short_factor" has 1 values; the rotary width \d+ needs \d+, one per pair'),
        ("phi3-rope-longrope-attention-factor-zero", "phi3",
         {"rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                              "short_factor": [1.0], "long_factor": [1.0],
                              "attention_factor": 0.0},
          "max_position_embeddings": 64},
         r'config\.json key "rope_parameters\.attention_factor" must be a number in \(0, inf\)'),
        ("phi3-rotary-too-narrow", "phi3",
         {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                              "partial_rotary_factor": 0.3}},
         r'the rotary width 1 \(head width 4 times partial_rotary_factor\) must be even'),
        ("gemma-rope-not-an-object", "gemma", {"rope_parameters": [1]},
         r'config\.json key "rope_parameters" must be an object'),
        ("mistral-window-zero", "mistral", {"sliding_window": 0},
         r'config\.json key "sliding_window" must be in \[1, 16777216\], got 0'),
        ("qwen2-unknown-layer-type", "qwen2", {"layer_types": ["chunked_attention"]},
         r'config\.json key "layer_types": layer 0 has type "chunked_attention"; supported: "full_attention", "sliding_attention"'),
        ("qwen2-layer-types-count", "qwen2", {"layer_types": ["full_attention"] * 3},
         r'config\.json key "layer_types" must be a list of 1 layer types'),
        ("qwen2-sliding-layer-without-window", "qwen2",
         {"layer_types": ["sliding_attention"], "sliding_window": None},
         r'config\.json key "layer_types" makes layer 0 sliding-window attention, but "sliding_window" is not set'),
        ("qwen2-sliding-without-layer-types", "qwen2",
         {"use_sliding_window": True, "sliding_window": 4},
         r'config\.json key "use_sliding_window" is true without "layer_types"'),
        ("gemma-unknown-activation", "gemma", {"hidden_activation": "gelu_10"},
         r'config\.json key "hidden_activation" is "gelu_10"; supported activations'),
        ("gemma2-attention-softcapping", "gemma2",
         {"attn_logit_softcapping": 50.0, "query_pre_attn_scalar": 4},
         r'config\.json key "attn_logit_softcapping" is set: attn\.sdpa has no soft-capping of attention scores'),
        ("gemma2-missing-query-scalar", "gemma2", {},
         r'config\.json has no key "query_pre_attn_scalar"'),
        ("gemma-bidirectional", "gemma", {"use_bidirectional_attention": True},
         r'config\.json key "use_bidirectional_attention" is true; only causal'),
        ("neox-rotary-too-narrow", "neox",
         {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                              "partial_rotary_factor": 0.2}},
         r'the rotary width 0 \(head width 4 times the partial rotary factor\) must be even and at least 2'),
        # Dynamic NTK grows the base past max_position_embeddings.
        ("neox-rope-dynamic-no-max-positions", "neox",
         {"rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}},
         r'config\.json has no key "max_position_embeddings", which this architecture needs'),
        ("opt-post-ln", "opt", {"do_layer_norm_before": False},
         r'config\.json key "do_layer_norm_before" is false; only pre-LN OPT layers'),
        ("opt-no-final-norm", "opt", {"_remove_final_layer_norm": True},
         r'config\.json key "_remove_final_layer_norm" is true'),
        ("phi-qk-layernorm", "phi", {"qk_layernorm": True},
         r'config\.json key "qk_layernorm" is true'),
        ("phi-tied", "phi", {"tie_word_embeddings": True},
         r'config\.json key "tie_word_embeddings" is true; Phi\'s LM head'),
        ("roberta-pad-beyond-positions", "roberta", {"pad_token_id": P},
         r'config\.json key "pad_token_id" \(16, where RoBERTa\'s positions start\) must be in \[0, max_position_embeddings - 1\)'),
        ("roberta-no-pad-token", "roberta", {"pad_token_id": "<drop>"},
         r'config\.json has no key "pad_token_id"'),
        ("albert-groups-do-not-divide", "albert", {"num_hidden_layers": 3, "num_hidden_groups": 2},
         r'num_hidden_layers 3 is not divisible by num_hidden_groups 2'),
        ("falcon-alibi", "falcon", {"alibi": True},
         r'config\.json key "alibi" is true; only Falcon with rotary positions'),
        ("bloom-post-ln-residual", "bloom", {"apply_residual_connection_post_layernorm": True},
         r'config\.json key "apply_residual_connection_post_layernorm" is true'),
        ("distilbert-unknown-activation", "distilbert", {"activation": "swiglu"},
         r'config\.json key "activation" is "swiglu"; supported activations'),
    ):
        config, tensors = FAMILIES[family]
        c.append(case(name, ckpt(config(**over), tensors()), [CFG + message]))
    # The error points at the key's own line.
    c.append(case("key-location-is-the-key-line",
                  ckpt(gpt2_config(n_head="two"), gpt2_tensors()),
                  [r'ckpt/config\.json:9:3: error: config\.json key "n_head" must be an integer']))
    # Tensors: (name, checkpoint files, the error located in the weights).
    for name, files, message in (
        ("gpt2-missing-tensor", ckpt(gpt2_config(), without(gpt2_tensors(), "transformer.h.0.ln_1.weight")),
         r"the checkpoint has no tensor 'transformer\.h\.0\.ln_1\.weight' \(\[n_embd\] = \[8\]\)"),
        ("gpt2-c_attn-shape",
         ckpt(gpt2_config(), dict(gpt2_tensors(), **{"transformer.h.0.attn.c_attn.weight": (D, 2 * D)})),
         r"tensor 'transformer\.h\.0\.attn\.c_attn\.weight' has shape \[8, 16\], but config\.json implies \[n_embd, 3 \* n_embd\] = \[8, 24\]"),
        ("gpt2-conv1d-transposed-in-checkpoint",
         ckpt(gpt2_config(), dict(gpt2_tensors(), **{"transformer.h.0.mlp.c_fc.weight": (4 * D, D)})),
         r"tensor 'transformer\.h\.0\.mlp\.c_fc\.weight' has shape \[32, 8\], but config\.json implies \[n_embd, n_inner\] = \[8, 32\]"),
        ("gpt2-untied-head-missing", ckpt(gpt2_config(tie_word_embeddings=False), gpt2_tensors()),
         r"the checkpoint has no tensor 'lm_head\.weight'"),
        ("gpt2-dtype-mixed", ckpt(gpt2_config(), gpt2_tensors(), {"transformer.h.0.ln_2.bias": "F16"}),
         r"tensor 'transformer\.h\.0\.ln_2\.bias' has dtype F16, but the checkpoint's weights are F32"),
        ("gpt2-wrong-family-weights", ckpt(gpt2_config(), bert_tensors()),
         r"the checkpoint has none of the tensors 'transformer\.wte\.weight', 'wte\.weight'"),
        ("bert-wrong-vocab", ckpt(bert_config(vocab_size=12), bert_tensors()),
         r"tensor 'embeddings\.word_embeddings\.weight' has shape \[11, 8\], but config\.json implies \[vocab_size, hidden_size\] = \[12, 8\]"),
        ("bert-missing-layer", ckpt(bert_config(num_hidden_layers=2), bert_tensors()),
         r"the checkpoint has no tensor 'encoder\.layer\.1\.attention\.self\.query\.weight'"),
        ("llama-kv-proj-shape", ckpt(llama_config(num_key_value_heads=2), llama_tensors()),
         r"tensor 'model\.layers\.0\.self_attn\.k_proj\.weight' has shape \[4, 8\], but config\.json implies \[num_key_value_heads \* head_dim, hidden_size\] = \[8, 8\]"),
        ("llama-missing-gate",
         ckpt(llama_config(), without(llama_tensors(), "model.layers.0.mlp.gate_proj.weight")),
         r"the checkpoint has no tensor 'model\.layers\.0\.mlp\.gate_proj\.weight'"),
        ("neox-fused-qkv-shape",
         ckpt(neox_config(), dict(neox_tensors(), **{"gpt_neox.layers.0.attention.query_key_value.weight": (D, 3 * D)})),
         r"tensor 'gpt_neox\.layers\.0\.attention\.query_key_value\.weight' has shape \[8, 24\], but config\.json implies \[3 \* hidden_size, hidden_size\] = \[24, 8\]"),
        ("no-float-tensors", ckpt(gpt2_config(), {"x": (2,)}, {"x": "I32"}),
         r"the checkpoint has no F32, F16 or BF16 tensor"),
    ):
        c.append(case(name, files, [ST + message]))
    # Files.
    good = ckpt(gpt2_config(), gpt2_tensors())
    c.append(case("no-config",
                  {"ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:0:0: error: cannot read ckpt/config\.json: No such file"]))
    c.append(case("config-truncated",
                  {"ckpt/config.json": good["ckpt/config.json"][:40],
                   "ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:1:1: error: invalid JSON in ckpt/config\.json"]))
    c.append(case("config-not-an-object",
                  {"ckpt/config.json": "[1, 2, 3]",
                   "ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:1:1: error: ckpt/config\.json must hold a JSON object"]))
    c.append(case("config-deeply-nested",
                  {"ckpt/config.json": '{"a": ' + "[" * 100000 + "]" * 100000 + "}",
                   "ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:1:1: error: ckpt/config\.json nests arrays/objects deeper than 64 levels"]))
    c.append(case("config-is-a-directory",
                  {"ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:0:0: error: ckpt/config\.json is not a regular file"],
                  dirs=["ckpt/config.json"]))
    c.append(case("config-is-a-fifo",
                  {"ckpt/model.safetensors": good["ckpt/model.safetensors"]},
                  [r"ckpt/config\.json:0:0: error: ckpt/config\.json is not a regular file"],
                  fifos=["ckpt/config.json"]))
    c.append(case("no-weights-file",
                  {"ckpt/config.json": good["ckpt/config.json"]},
                  [r"ckpt:0:0: error: the checkpoint directory has neither model\.safetensors nor model\.safetensors\.index\.json"]))
    c.append(case("not-a-directory",
                  {"ckpt": "not a directory"},
                  [r"ckpt:0:0: error: not a checkpoint directory"]))
    c.append(case("safetensors-truncated",
                  {"ckpt/config.json": good["ckpt/config.json"],
                   "ckpt/model.safetensors": good["ckpt/model.safetensors"][:100]},
                  [ST + r"ckpt/model\.safetensors: "]))
    c.append(case("safetensors-is-a-fifo",
                  {"ckpt/config.json": good["ckpt/config.json"]},
                  [ST + r"ckpt/model\.safetensors is not a regular file"],
                  fifos=["ckpt/model.safetensors"]))
    c.append(case("safetensors-empty",
                  {"ckpt/config.json": good["ckpt/config.json"],
                   "ckpt/model.safetensors": b""},
                  [ST + r"ckpt/model\.safetensors: "]))
    # Shard indexes.
    tensors = gpt2_tensors()
    names = sorted(tensors)
    shard_a = {n: tensors[n] for n in names[::2]}
    shard_b = {n: tensors[n] for n in names[1::2]}
    shard_files = {"ckpt/config.json": good["ckpt/config.json"],
                   "ckpt/a.safetensors": safetensors(shard_a),
                   "ckpt/b.safetensors": safetensors(shard_b)}
    weight_map = dict({n: "a.safetensors" for n in shard_a}, **{n: "b.safetensors" for n in shard_b})
    IDX = r"ckpt/model\.safetensors\.index\.json:1:1: error: "
    # (name, the index's JSON object, the error located in the index).
    for name, index, message in (
        ("index-without-weight-map", {"metadata": {}}, r'the shard index has no "weight_map" object'),
        ("index-shard-path-escapes", {"weight_map": dict(weight_map, **{names[0]: "../a.safetensors"})},
         r"weight_map entry '[^']+' names shard '\.\./a\.safetensors', which is not a file name in the checkpoint directory"),
        ("index-shard-missing", {"weight_map": dict(weight_map, **{names[0]: "c.safetensors"})},
         r"ckpt/c\.safetensors: cannot open"),
        ("index-tensor-not-in-shard", {"weight_map": dict(weight_map, **{names[0]: "b.safetensors"})},
         r"the shard index maps tensor '" + names[0].replace(".", r"\.") + r"' to b\.safetensors, which has no such tensor"),
        ("index-missing-tensor", {"weight_map": without(weight_map, "transformer.ln_f.bias")},
         r"the checkpoint has no tensor 'transformer\.ln_f\.bias'"),
        ("index-empty", {"weight_map": {}}, r"the shard index's weight_map is empty"),
    ):
        c.append(case(name, dict(shard_files, **{"ckpt/model.safetensors.index.json": json.dumps(index)}),
                      [IDX + message]))
    # --input-shape: (name, its values, the error).
    for name, shapes, message in (
        ("input-shape-missing", [],
         r"ckpt/config\.json:1:1: error: input 'input_ids' has symbolic dimensions \[batch, sequence\]; fix them with --input-shape input_ids=<batch>x<sequence>"),
        ("input-shape-unknown-input", ["input_ids=1x8", "attention_mask=1x8"],
         r"--input-shape names input 'attention_mask', but the model's inputs are: input_ids"),
        ("input-shape-rank", ["input_ids=8"],
         r"--input-shape input_ids has 1 dimensions, but input 'input_ids' has 2"),
        ("input-shape-not-a-number", ["input_ids=1xfoo"],
         r"--input-shape 'input_ids=1xfoo': dimension 'foo' must be an integer"),
        ("input-shape-zero", ["input_ids=0x8"], r"dimension '0' must be an integer in \[1, 16777216\]"),
        ("input-shape-no-equals", ["input_ids"], r"--input-shape 'input_ids' must have the form NAME=D0xD1"),
        ("input-shape-twice", ["input_ids=1x8", "input_ids=1x4"],
         r"--input-shape gives input 'input_ids' twice"),
        ("sequence-longer-than-positions", ["input_ids=1x32"],
         CFG + r"sequence length 32 \(--input-shape input_ids\) exceeds n_positions = 16"),
    ):
        flags = [arg for shape in shapes for arg in ("--input-shape", shape)]
        c.append(case(name, good, [message], cmd=CMD[:3] + flags + ["-o", "out.mlir"]))
    return c
