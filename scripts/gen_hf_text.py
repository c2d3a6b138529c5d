#!/usr/bin/env python3
"""Tokenizers and text continuations of tiny checkpoints, by transformers.

For the decoder gpt2 and the encoder-decoders t5_gated and bart in
test/Frontend/HF/Inputs this writes into the checkpoint's directory
  tokenizer.json   a small BPE tokenizer (sentencepiece-like: Metaspace
                   pre-tokenizer and decoder) trained with Hugging Face's
                   `tokenizers` on a few fixed sentences, exactly the
                   model's 99 tokens; T5's has <pad> </s> <unk> at 0, 1, 2
                   and appends </s> to every encoded text, as T5's does;
                   BART's has <s> <pad> </s> <unk> and frames every text
                   with <s> and </s>, as BART's does
  text_expected.json  the prompts and transformers' greedy continuations
                   (`model.generate(do_sample=False)`, each prompt alone,
                   decoded with skip_special_tokens; T5's first prompt
                   ends with its eos, BART's generation config forces eos
                   as the last token), the independent
                   reference for `Model.generate_text` of the attnc Python
                   package
The existing files of the checkpoints (weights, config.json,
generation_config.json) are left as they are. text_expected.json holds:
  greedy        the prompts' continuations under the checkpoint's own
                generation config
  eos (gpt2)    the same with eos_token_id a list whose second id is a
                token of the first prompt's greedy continuation (a regular
                token standing in for an end-of-text token, chosen so that
                one row stops early and the other does not)
  stop          the continuations under transformers' `stop_strings`
                (gpt2: the first prompt's text holds the stop string,
                across two of its tokens; t5_gated: the third prompt's
                holds "\n\n"), cut before the stop string
The smallest gap between the best and second-best logit over all greedy
steps is printed: a near tie could flip under float rounding.

  /path/to/venv/bin/python scripts/gen_hf_text.py test/Frontend/HF/Inputs
(transformers, torch and tokenizers). The output is committed; it is
byte-for-byte reproducible.
"""

import argparse
import json
import os

import torch
from tokenizers import (Tokenizer, decoders, models, pre_tokenizers,
                        processors, trainers)
from transformers import (AutoModelForCausalLM, AutoModelForSeq2SeqLM,
                          PreTrainedTokenizerFast)

VOCAB = 99
TRAINING_TEXT = [
    "the quick brown fox jumps over the lazy dog",
    "a small model writes a short story about the sea",
    "once upon a time there was a tiny compiler",
    "she sells sea shells by the sea shore",
    "the rain in spain stays mainly in the plain",
    "to be or not to be, that is the question.",
    "hello world! how are you today?\n\nfine, thanks.",
]
GPT2_PROMPTS = ["the quick brown fox", "the lazy dog"]
GPT2_NEW_TOKENS = 20
# Three prompts for a model compiled for two rows; the first ends with
# </s> (T5's eos) a few tokens in.
T5_PROMPTS = ["to be or not", "thanks", "the rain in spain"]
T5_NEW_TOKENS = 12
BART_PROMPTS = ["she sells", "the rain in spain"]
BART_NEW_TOKENS = 12


def train_tokenizer(specials, template=None):
    """A BPE tokenizer of exactly VOCAB tokens, `specials` first; with
    `template` (e.g. "$A </s>") its special tokens frame every text."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=specials,
                                  show_progress=False)
    tok.train_from_iterator(TRAINING_TEXT, trainer)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    if template is not None:
        tok.post_processor = processors.TemplateProcessing(
            single=template,
            special_tokens=[(t, tok.token_to_id(t)) for t in template.split()
                            if t != "$A"])
    return tok


def hf_tokenizer(path):
    return PreTrainedTokenizerFast(tokenizer_file=path,
                                   clean_up_tokenization_spaces=False)


def greedy(model, tok, hf_tok, prompts, new_tokens, encoder=False, **kw):
    """transformers' greedy continuation of each prompt alone, decoded with
    skip_special_tokens; the smallest top-2 logit gap of the steps."""
    texts, gap = [], float("inf")
    for prompt in prompts:
        ids = torch.tensor([tok.encode(prompt).ids])
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids),
                                 max_new_tokens=new_tokens, do_sample=False,
                                 output_scores=True,
                                 return_dict_in_generate=True, **kw)
        # An encoder-decoder's output starts with the decoder's start token,
        # a decoder's with the prompt.
        start = 1 if encoder else ids.shape[1]
        new = out.sequences[0, start:].tolist()
        texts.append((new, hf_tok.decode(new, skip_special_tokens=True)))
        for scores in out.scores:
            top2 = torch.topk(scores[0], 2).values
            gap = min(gap, float(top2[0] - top2[1]))
    return texts, gap


def stopped(model, tok, hf_tok, prompts, new_tokens, stops, rows,
            encoder=False, **kw):
    """transformers' greedy continuations under `stop_strings`, each cut
    before its first stop string: a prefix of its text in `rows` (the
    continuations without them)."""
    stop_rows, _ = greedy(model, tok, hf_tok, prompts, new_tokens,
                          encoder=encoder, stop_strings=stops,
                          tokenizer=hf_tok, **kw)
    texts = []
    for (_, cut), (_, full) in zip(stop_rows, rows):
        at = min((cut.find(s) for s in stops if s in cut), default=-1)
        if at >= 0:
            cut = cut[:at]
        assert full.startswith(cut), (cut, full)
        texts.append(cut)
    return texts


def prepare(inputs, name, model_class, specials, template=None):
    """Trains the checkpoint's tokenizer (train_tokenizer) and saves it as
    its tokenizer.json: (directory, tokenizer, transformers' tokenizer of
    that file, transformers' model)."""
    d = os.path.join(inputs, name)
    tok = train_tokenizer(specials, template)
    tok_path = os.path.join(d, "tokenizer.json")
    tok.save(tok_path)
    return (d, tok, hf_tokenizer(tok_path),
            model_class.from_pretrained(d).eval())


def write_expected(d, name, prompts, new_tokens, rows, gap, **more):
    """text_expected.json: the prompts, their greedy continuations `rows`
    and the `more` entries; prints it with the smallest top-2 logit gap."""
    expected = {
        "prompts": prompts,
        "max_new_tokens": new_tokens,
        "greedy": [t for _, t in rows],
        "greedy_ids": [ids for ids, _ in rows],
        **more,
    }
    with open(os.path.join(d, "text_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"{name}: {expected} min top-2 logit gap {gap:.3g}")


def gpt2(inputs):
    d, tok, hf_tok, model = prepare(inputs, "gpt2", AutoModelForCausalLM,
                                    ["<|endoftext|>", "<unk>"])
    config_eos = model.generation_config.eos_token_id
    rows, gap = greedy(model, tok, hf_tok, GPT2_PROMPTS, GPT2_NEW_TOKENS,
                       pad_token_id=0)
    # A token of the first continuation that the second lacks, a few steps
    # in: the first row stops there, the second runs to the end.
    first, second = rows[0][0], rows[1][0]
    eos = next(t for t in first[3:] if t not in second)
    eos_ids = [config_eos, eos]
    eos_rows, eos_gap = greedy(model, tok, hf_tok, GPT2_PROMPTS,
                               GPT2_NEW_TOKENS, pad_token_id=0,
                               eos_token_id=eos_ids)
    assert len(eos_rows[0][0]) < GPT2_NEW_TOKENS, eos_rows[0]
    assert eos_rows[1] == rows[1], (eos_rows[1], rows[1])
    # A stop string inside the first text, across two of its tokens: the
    # last character of one and the first of the next, different one.
    text = rows[0][1]
    change = next(i for i in range(1, len(first)) if first[i] != first[i - 1])
    boundary = len(hf_tok.decode(first[:change], skip_special_tokens=True))
    stop = text[boundary - 1:boundary + 1]
    stops = [stop, "\n\n"]
    stop_texts = stopped(model, tok, hf_tok, GPT2_PROMPTS, GPT2_NEW_TOKENS,
                         stops, rows, pad_token_id=0)
    assert len(stop_texts[0]) < len(rows[0][1]), stop_texts
    write_expected(d, "gpt2", GPT2_PROMPTS, GPT2_NEW_TOKENS, rows,
                   min(gap, eos_gap),
                   eos={"eos_token_id": eos_ids,
                        "texts": [t for _, t in eos_rows]},
                   stop={"stop": stops, "texts": stop_texts})


def t5(inputs):
    d, tok, hf_tok, model = prepare(inputs, "t5_gated", AutoModelForSeq2SeqLM,
                                    ["<pad>", "</s>", "<unk>"], "$A </s>")
    rows, gap = greedy(model, tok, hf_tok, T5_PROMPTS, T5_NEW_TOKENS,
                       encoder=True)
    assert rows[0][0][-1] == model.generation_config.eos_token_id, rows[0]
    stops = ["\n\n"]
    stop_texts = stopped(model, tok, hf_tok, T5_PROMPTS, T5_NEW_TOKENS,
                         stops, rows, encoder=True)
    assert len(stop_texts[2]) < len(rows[2][1]), stop_texts
    write_expected(d, "t5_gated", T5_PROMPTS, T5_NEW_TOKENS, rows, gap,
                   stop={"stop": stops, "texts": stop_texts})


def bart(inputs):
    d, tok, hf_tok, model = prepare(inputs, "bart", AutoModelForSeq2SeqLM,
                                    ["<s>", "<pad>", "</s>", "<unk>"],
                                    "<s> $A </s>")
    rows, gap = greedy(model, tok, hf_tok, BART_PROMPTS, BART_NEW_TOKENS,
                       encoder=True)
    # The generation config's forced_eos_token_id ends every row.
    forced = model.generation_config.forced_eos_token_id
    assert all(ids[-1] == forced for ids, _ in rows), rows
    write_expected(d, "bart", BART_PROMPTS, BART_NEW_TOKENS, rows, gap)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs")
    args = ap.parse_args()
    torch.manual_seed(0)
    gpt2(args.inputs)
    t5(args.inputs)
    bart(args.inputs)


if __name__ == "__main__":
    main()
