"""Text in, text out: a checkpoint's tokenizer and generation config, and
Model's text generation (generate_text, generate_text_details, stream_text)
over the runtime's session API."""

import ctypes
import json
import os
import time

import numpy as np

from ._capi import _Sampling
from ._errors import AttncError


# generate_text's default eos: the generation config's.
_FROM_CONFIG = object()

# The token ids of a generation config that generate_text uses.
_GENERATION_KEYS = ("eos_token_id", "pad_token_id", "bos_token_id",
                    "decoder_start_token_id", "forced_bos_token_id",
                    "forced_eos_token_id")


def _token_ids(value, what):
    """A config's token id(s): an int, a list of ints, or None -> a tuple."""
    if value is None:
        return ()
    values = value if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool)
               for v in values):
        raise AttncError("%s must be an int or a list of ints, got %r"
                         % (what, value))
    return tuple(values)


def _load_tokenizer(path):
    """(tokenizers.Tokenizer, generation config) from a checkpoint directory
    holding tokenizer.json (or from that file). The config is the token ids
    of generation_config.json beside it, those it lacks from config.json
    (eos_token_id and forced_eos_token_id tuples of ids, the others
    ints)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        directory, file = path, os.path.join(path, "tokenizer.json")
    else:
        directory, file = os.path.dirname(path) or ".", path
    if not os.path.isfile(file):
        raise AttncError("no tokenizer.json in %s: tokenizer= takes a "
                         "Hugging Face checkpoint directory holding one (a "
                         "fast tokenizer), or its path" % path)
    try:
        import tokenizers
    except ImportError:
        raise AttncError("tokenizer= needs Hugging Face's 'tokenizers' "
                         "package, which is not installed (pip install "
                         "tokenizers)") from None
    try:
        tokenizer = tokenizers.Tokenizer.from_file(file)
    except Exception as e:  # the library's own exception type
        raise AttncError("cannot read %s: %s" % (file, e)) from None
    config, seen = {}, set()
    for name in ("generation_config.json", "config.json"):
        json_path = os.path.join(directory, name)
        if not os.path.isfile(json_path):
            continue
        try:
            with open(json_path) as f:
                values = json.load(f)
        except (OSError, ValueError) as e:
            raise AttncError("cannot read %s: %s" % (json_path, e)) from None
        for key in _GENERATION_KEYS:
            if key in seen or key not in values:
                continue
            seen.add(key)
            ids = _token_ids(values[key], "%s's %s" % (name, key))
            if key in ("eos_token_id", "forced_eos_token_id"):
                config[key] = ids
            elif ids:
                if len(ids) != 1:
                    raise AttncError("%s's %s must be one token id, got %r"
                                     % (name, key, values[key]))
                config[key] = ids[0]
    return tokenizer, config


class TextResult:
    """A generated text and what a server reports about it: prompt_tokens
    (the prompt's tokens), completion_tokens (the new tokens, an eos among
    them) and finish_reason ("stop": an eos token or a stop string ended it;
    "length": max_new_tokens did)."""

    __slots__ = ("text", "prompt_tokens", "completion_tokens",
                 "finish_reason")

    def __init__(self, text, prompt_tokens, completion_tokens,
                 finish_reason):
        self.text = text
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.finish_reason = finish_reason

    def __repr__(self):
        return "TextResult(%r, %d, %d, %r)" % (
            self.text, self.prompt_tokens, self.completion_tokens,
            self.finish_reason)


class _TextPieces:
    """stream_text's pieces of one row's text as its tokens come: a piece
    is held back while it might still become part of a stop string or ends
    inside a character that a later token completes."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.sent = ""

    def step(self, tokens, stopped, stops):
        """The new piece after a step (or None): `tokens` the row's tokens
        so far, `stopped` its text once a stop ended it (else None)."""
        if stopped is not None:
            return None  # stopped: the rest comes with the result
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        # Hold back an incomplete character and a tail that a stop string
        # may start with.
        safe = len(text.rstrip("\ufffd"))
        longest = max(map(len, stops), default=1)
        safe = next((p for p in range(max(safe - longest + 1, 0), safe)
                     if any(s.startswith(text[p:safe]) for s in stops)),
                    safe)
        text = text[:safe]
        if len(text) > len(self.sent) and text.startswith(self.sent):
            piece, self.sent = text[len(self.sent):], text
            return piece
        return None

    def done(self, result):
        """The last piece (or None) given the row's TextResult."""
        if result.text.startswith(self.sent) and result.text != self.sent:
            return result.text[len(self.sent):]
        return None



class _TextGeneration:
    """Model's text generation. It uses the Model's tokenizer,
    generation_config, inputs, and its runtime (_lib, _m, _check, _thread)."""

    def generate_text(self, prompts, max_new_tokens, *, temperature=0.0,
                      top_k=0, top_p=1.0, seed=0, stop=None,
                      eos_token_id=_FROM_CONFIG):
        """Continues text: `prompts` (a str, or a list of str) encoded with
        the model's tokenizer (`load(..., tokenizer=...)`), up to
        `max_new_tokens` new tokens each, decoded without special tokens.
        Returns the continuations (a str for a str, else a list), without
        the prompts.

        Tokens are chosen as by `generate` (the runtime's sampler):
        temperature 0 is greedy, otherwise sampling with top_k, top_p and
        `seed` (the same seed gives the same texts). A row stops after one
        of `eos_token_id` (default: the checkpoint's generation config; an
        int, a list, or None for none), or once its text holds one of the
        `stop` strings (a str or a list), and is then cut before the stop
        string; the others go on. The config's forced_bos_token_id (an
        encoder-decoder's first new token) and forced_eos_token_id (the
        last) apply as in transformers; its other settings (beams,
        repetition penalties, minimum lengths) do not. The prompts run in
        batches of the rows the model was compiled for, padded to the
        longest, so the longest prompt plus max_new_tokens must fit the
        compiled sequence. An encoder-decoder (T5, BART) takes each prompt
        as its encoder input and starts its decoder with the config's
        decoder_start_token_id.
        `last_generate_timing` then holds (prefill ms, decode ms, steps),
        summed over the batches."""
        single = isinstance(prompts, str)
        results = self.generate_text_details(
            prompts, max_new_tokens, temperature=temperature, top_k=top_k,
            top_p=top_p, seed=seed, stop=stop, eos_token_id=eos_token_id)
        texts = [r.text for r in results]
        return texts[0] if single else texts

    def generate_text_details(self, prompts, max_new_tokens, *,
                              temperature=0.0, top_k=0, top_p=1.0, seed=0,
                              stop=None, eos_token_id=_FROM_CONFIG):
        """generate_text with what a server reports about each prompt: a
        list of TextResult (text, prompt_tokens, completion_tokens,
        finish_reason "stop" after an eos token or a stop string, else
        "length"), one per prompt (a str counts as a list of one)."""
        results = []
        for event in self._text_events(prompts, max_new_tokens, temperature,
                                       top_k, top_p, seed, stop,
                                       eos_token_id):
            if event[0] == "done":
                results += event[1]
        return results

    def stream_text(self, prompt, max_new_tokens, *, temperature=0.0,
                    top_k=0, top_p=1.0, seed=0, stop=None,
                    eos_token_id=_FROM_CONFIG):
        """generate_text of one prompt (a str), token by token: yields the
        text as it grows, in pieces whose concatenation is generate_text's
        text (the same arguments give the same text). A piece is held back
        while it might still become part of a stop string or ends inside a
        character that a later token completes, so a step may yield
        nothing; the last item is the TextResult of generate_text_details.
        Close the generator (or run it to its end) to free its session."""
        if not isinstance(prompt, str):
            raise AttncError("stream_text takes one prompt, a str")
        pieces = _TextPieces(self.tokenizer)
        for event in self._text_events(prompt, max_new_tokens, temperature,
                                       top_k, top_p, seed, stop,
                                       eos_token_id):
            if event[0] == "done":
                result = event[1][0]
                piece = pieces.done(result)
                if piece:
                    yield piece
                yield result
                return
            _, tokens, texts, stops = event
            piece = pieces.step(tokens[0], texts[0], stops)
            if piece:
                yield piece

    def _text_events(self, prompts, max_new_tokens, temperature, top_k,
                     top_p, seed, stop, eos_token_id):
        """The generation of generate_text, as events: ("step", tokens,
        stopped texts, stop strings) after each token of a batch of
        prompts, ("done", [TextResult]) at the end of each batch."""

        if self._m is None:
            raise AttncError("the model is closed")
        if self.tokenizer is None:
            raise AttncError("generate_text needs a tokenizer: load the "
                             "model with tokenizer=CHECKPOINT_DIR (a "
                             "directory holding tokenizer.json)")
        rows = [prompts] if isinstance(prompts, str) else list(prompts)
        if not rows or not all(isinstance(p, str) for p in rows):
            raise AttncError("prompts must be a str or a non-empty list of "
                             "str")
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        if not all(isinstance(s, str) and s for s in stops):
            raise AttncError("stop must be a non-empty str or a list of them")
        config = self.generation_config
        eos = frozenset(config.get("eos_token_id", ())
                        if eos_token_id is _FROM_CONFIG
                        else _token_ids(eos_token_id, "eos_token_id"))
        max_new_tokens = int(max_new_tokens)
        if max_new_tokens < 1:
            raise AttncError("max_new_tokens must be >= 1, got %d"
                             % max_new_tokens)
        encoded = [e.ids for e in self.tokenizer.encode_batch(rows)]
        names = {i.name: i for i in self.inputs}
        encoder = "decoder_input_ids" in names
        start = None
        if encoder:
            start = config.get("decoder_start_token_id",
                               config.get("bos_token_id"))
            if start is None:
                raise AttncError("the model is an encoder-decoder and its "
                                 "generation config has no "
                                 "decoder_start_token_id")
            width = names["input_ids"].shape[-1] if "input_ids" in names \
                else None
            for i, ids in enumerate(encoded):
                if not ids:
                    raise AttncError("prompt %d encodes to no tokens" % i)
                if width is not None and len(ids) > width:
                    raise AttncError(
                        "prompt %d is %d tokens; the model's encoder takes "
                        "at most %d (compile it for a longer input_ids)"
                        % (i, len(ids), width))
        else:
            for i, ids in enumerate(encoded):
                if not ids:
                    if config.get("bos_token_id") is None:
                        raise AttncError("prompt %d encodes to no tokens and "
                                         "there is no bos_token_id to start "
                                         "it" % i)
                    encoded[i] = [config["bos_token_id"]]
        sampling = _Sampling(float(temperature), int(top_k), float(top_p))
        session = self._lib.attnrt_session_create(self._m, int(seed))
        if not session:
            self._check(1)
        try:
            max_batch, capacity = ctypes.c_int64(), ctypes.c_int64()
            self._lib.attnrt_session_shape(session, ctypes.byref(max_batch),
                                           ctypes.byref(capacity), None)
            if encoder and 1 + max_new_tokens > capacity.value:
                raise AttncError(
                    "the decoder's start token plus %d new tokens exceed the "
                    "model's %d decoder positions (compile it for a longer "
                    "decoder_input_ids)" % (max_new_tokens, capacity.value))
            for i, ids in enumerate([] if encoder else encoded):
                if len(ids) + max_new_tokens > capacity.value:
                    raise AttncError(
                        "prompt %d: %d tokens plus %d new tokens exceed the "
                        "model's %d positions (compile it for a longer "
                        "sequence)" % (i, len(ids), max_new_tokens,
                                       capacity.value))
            timing = [0.0, 0.0, 0]
            for first in range(0, len(encoded), max_batch.value):
                yield from self._generate_batch(
                    session, encoded[first:first + max_batch.value], start,
                    max_new_tokens, sampling, eos, stops, timing)
            self._thread.generate_timing = tuple(timing)
        finally:
            self._lib.attnrt_session_free(session)

    def _generate_batch(self, session, encoded, start, max_new_tokens,
                        sampling, eos, stops, timing):
        """_text_events of at most a compiled batch of prompts: the
        runtime's prefill, then its sampler and a decode step per token,
        until every row has stopped."""
        lib, check = self._lib, self._check
        batch = len(encoded)
        pad = self.generation_config.get("pad_token_id") or 0
        width = max(len(ids) for ids in encoded)
        ids = np.full((batch, width), pad, np.int64)
        for b, row in enumerate(encoded):
            ids[b, :len(row)] = row
        lengths = np.array([len(row) for row in encoded], np.int64)
        began = time.perf_counter()
        if start is not None:
            check(lib.attnrt_session_set_encoder_input(
                session, ids.ctypes.data, lengths.ctypes.data, batch, width))
            ids = np.full((batch, 1), start, np.int64)
            lengths = np.ones(batch, np.int64)
            width = 1
        check(lib.attnrt_session_prefill(session, ids.ctypes.data,
                                         lengths.ctypes.data, batch, width))
        prefilled = time.perf_counter()
        timing[0] += (prefilled - began) * 1e3
        decode = lambda row: self.tokenizer.decode(row,
                                                   skip_special_tokens=True)
        config = self.generation_config
        forced_bos = (config.get("forced_bos_token_id") if start is not None
                      else None)
        forced_eos = config.get("forced_eos_token_id", ())
        tokens = [[] for _ in range(batch)]
        texts = [None] * batch
        next_ids = np.zeros(batch, np.int64)
        for step in range(max_new_tokens):
            if step:
                check(lib.attnrt_session_decode(session, next_ids.ctypes.data))
                timing[2] += 1
            check(lib.attnrt_session_sample(session, ctypes.byref(sampling),
                                            next_ids.ctypes.data))
            # As transformers' forced BOS (an encoder-decoder's first token)
            # and forced EOS (the last token) logits processors.
            if step == 0 and forced_bos is not None:
                next_ids[:] = forced_bos
            if step == max_new_tokens - 1 and forced_eos:
                next_ids[:] = min(forced_eos)
            for b in range(batch):
                if texts[b] is not None:
                    continue
                tokens[b].append(int(next_ids[b]))
                if tokens[b][-1] in eos:
                    texts[b] = decode(tokens[b])
                elif stops:
                    text = decode(tokens[b])
                    if any(s in text for s in stops):
                        texts[b] = text
            yield ("step", tokens, texts, stops)
            if all(t is not None for t in texts):
                break
        timing[1] += (time.perf_counter() - prefilled) * 1e3
        out = []
        for b in range(batch):
            text = decode(tokens[b]) if texts[b] is None else texts[b]
            cut = min((text.find(s) for s in stops if s in text),
                      default=len(text))
            out.append(TextResult(text[:cut], len(encoded[b]),
                                  len(tokens[b]),
                                  "length" if texts[b] is None else "stop"))
        yield ("done", out)
