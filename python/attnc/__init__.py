"""attnc from Python: compile a model and run it through libattnrt's C API.

    import attnc
    lib = attnc.compile("model.onnx", input_shape={"input_ids": (1, 128)})
    model = attnc.load(lib)                # weights beside it, or weights=...
                                           # (a file or a shard index)
    out = model.run(input_ids=ids)         # {"last_hidden_state": array}
    new_ids = model.generate(prompt_ids, max_new_tokens=32)  # decoders
    chat = attnc.load(lib, tokenizer="checkpoint-dir")  # its tokenizer.json
    text = chat.generate_text("Once upon a time", 32, stop=["\n\n"])

A Model may be run from several threads at once: each thread's runs go
through its own execution context (inputs, outputs, state), all sharing the
model's weights, and ctypes releases the GIL while the model computes.
`model.context()` gives a context of one's own to run through explicitly.

`compile` runs attn-compile (the build tree's, $ATTNC_BIN_DIR's or the one on
PATH) with --shared; `load` opens the library with ctypes (RTLD_LOCAL, so
several models live side by side) and talks to the C API in
include/attnc/Runtime/attnrt.h. Inputs and outputs carry the model's names
(an imported model's graph names, `input0`... for hand-written IR). Every
failure raises AttncError with the compiler's or the runtime's message.
Text in and out needs Hugging Face's `tokenizers` package (an optional
dependency, imported only when a tokenizer is given).
"""

import ctypes
import os
import threading
import time

import numpy as np

# The package's parts live in private modules; the public names are here.
from ._capi import _DTYPES, _Sampling, _declare, _raise_failure
from ._compile import compile
from ._errors import AttncError
from ._text import TextResult, _TextGeneration, _load_tokenizer

__all__ = ["AttncError", "Context", "Model", "TensorInfo", "TextResult",
           "compile", "load"]


# Defined in the private modules but named as attnc's: tracebacks print
# attnc.AttncError, and pickles (Ray Serve's) refer to the public names.
for _public in (AttncError, TextResult, compile):
    _public.__module__ = __name__
del _public


class TensorInfo:
    """A model input or output: name, dtype ("f32", ...), numpy dtype, shape
    (a tuple; None for a dynamic dimension, e.g. a sequence length chosen
    per run)."""

    def __init__(self, name, dtype, np_dtype, shape):
        self.name = name
        self.dtype = dtype
        self.np_dtype = np_dtype
        self.shape = shape

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.dtype, self.shape)


class _Closing:
    """close() at the end of a `with` block and on garbage collection."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Model(_TextGeneration, _Closing):
    """A compiled model library opened through the attnrt C API."""

    def __init__(self, library, weights=None, tokenizer=None):
        library = str(library)
        # The tokenizer first: its errors need no model.
        self.tokenizer, self.generation_config = (
            _load_tokenizer(tokenizer) if tokenizer is not None
            else (None, {}))
        try:
            self._lib = ctypes.CDLL(os.path.abspath(library),
                                    mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise AttncError("cannot load %s: %s" % (library, e)) from None
        _declare(self._lib)
        # Per-thread results (generate timings), like the runtime's
        # per-thread run state.
        self._thread = threading.local()
        err = ctypes.create_string_buffer(1024)
        self._m = self._lib.attnrt_open_linked(err, len(err))
        if not self._m:
            raise AttncError(err.value.decode(errors="replace"))
        self.target = self._lib.attnrt_target(self._m).decode()
        self.inputs = [self._info("input", i)
                       for i in range(self._lib.attnrt_num_inputs(self._m))]
        self.outputs = [self._info("output", i)
                        for i in range(self._lib.attnrt_num_outputs(self._m))]
        # Model state (a decode step's KV caches): owned by the model and
        # updated in place by every run.
        self.states = [self._info("state", i)
                       for i in range(self._lib.attnrt_num_states(self._m))]
        num_weights = self._lib.attnrt_num_weights(self._m)
        if weights is None and num_weights > 0:
            beside = library + ".safetensors"
            if not os.path.exists(beside):
                self.close()
                raise AttncError("%s has %d weights: pass weights=PATH (there "
                                 "is no %s)" % (library, num_weights, beside))
            weights = beside
        # Kept for a library that opens this model's code with its own
        # runtime (generate_many's prefill).
        self._weights = weights
        if weights is not None:
            self._check(self._lib.attnrt_bind_weights(
                self._m, os.fsencode(str(weights))))

    def _info(self, kind, index):
        fn = lambda what: getattr(self._lib, "attnrt_%s_%s" % (kind, what))
        code = fn("dtype")(self._m, index)
        dtype, np_dtype = _DTYPES[code]
        rank = fn("rank")(self._m, index)
        # -1 is a dynamic dimension.
        shape = tuple(None if d < 0 else d for d in
                      (fn("dim")(self._m, index, a) for a in range(rank)))
        return TensorInfo(fn("name")(self._m, index).decode(), dtype,
                          np_dtype, shape)

    def _check(self, status):
        if status != 0:
            _raise_failure(self._lib.attnrt_last_error(self._m))

    def run(self, *args, **kwargs):
        """Runs the model on inputs given by position or by name (numpy
        arrays of the model's shape; values are converted to its dtype when
        numpy can do so without changing their kind). Returns a dict of the
        outputs by name. Threads may call it at once: each runs in its own
        context (the runtime's per-thread context of the model)."""
        if self._m is None:
            raise AttncError("the model is closed")
        return self._run(_ModelCalls(self), args, kwargs)

    def context(self):
        """A new execution context of the model: its own inputs, outputs and
        state (KV caches), sharing the model's weights. Close it (or leave a
        `with` block) before closing the model."""
        if self._m is None:
            raise AttncError("the model is closed")
        return Context(self)

    def _run(self, calls, args, kwargs):
        if len(args) > len(self.inputs):
            raise AttncError("%d inputs given, the model takes %d"
                             % (len(args), len(self.inputs)))
        given = dict(zip((i.name for i in self.inputs), args))
        names = {i.name for i in self.inputs}
        for name, value in kwargs.items():
            if name not in names:
                raise AttncError("unknown input '%s' (the model's inputs: %s)"
                                 % (name, ", ".join(i.name for i in
                                                    self.inputs)))
            if name in given:
                raise AttncError("input '%s' given twice" % name)
            given[name] = value
        keep = []
        for index, info in enumerate(self.inputs):
            if info.name not in given:
                raise AttncError("input '%s' is missing" % info.name)
            array = np.asarray(given[info.name])
            # Dynamic dimensions (None) take any size; the runtime checks
            # those that must agree between inputs.
            fits = array.ndim == len(info.shape) and all(
                want is None or have == want
                for have, want in zip(array.shape, info.shape))
            if not fits:
                axis = next((a for a in range(min(array.ndim, len(info.shape)))
                             if info.shape[a] is not None and
                             array.shape[a] != info.shape[a]), None)
                where = ("rank %d, the model's is %d"
                         % (array.ndim, len(info.shape))
                         if axis is None else
                         "dimension %d is %d, the model's is %d"
                         % (axis, array.shape[axis], info.shape[axis]))
                raise AttncError("input '%s' has shape %s but the model "
                                 "takes %s (%s)" % (info.name, array.shape,
                                                    info.shape, where))
            if array.dtype != info.np_dtype:
                if not np.can_cast(array.dtype, info.np_dtype,
                                   casting="same_kind"):
                    raise AttncError("input '%s' is %s; the model takes %s"
                                     % (info.name, array.dtype, info.dtype))
                array = array.astype(info.np_dtype)
            array = np.ascontiguousarray(array)
            keep.append(array)
            dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            calls._check(calls._set_input(
                index, array.ctypes.data, array.nbytes, array.ndim, dims))
        calls._check(calls._invoke())
        outputs = {}
        for index, info in enumerate(self.outputs):
            shape = info.shape
            if None in shape:
                dims = calls._output_shape(index)
                if not dims:
                    calls._check(1)
                shape = tuple(dims[a] for a in range(len(info.shape)))
            out = np.empty(shape, info.np_dtype)
            calls._check(calls._get_output(index, out.ctypes.data,
                                           out.nbytes))
            outputs[info.name] = out
        return outputs

    __call__ = run

    def generate(self, prompt, max_new_tokens, *, lengths=None,
                 temperature=0.0, top_k=0, top_p=1.0, seed=0, eos=None,
                 encoder_input_ids=None, encoder_lengths=None):
        """Generates `max_new_tokens` tokens per prompt row with a causal
        language model and returns them, int64 [batch, max_new_tokens].

        `prompt` is token ids [batch, width] (or [width]); row b uses its
        first lengths[b] ids (default: all). temperature 0 is greedy;
        otherwise tokens are drawn from softmax(logits / temperature)
        restricted to the top_k most likely (0: all) and then to those
        reaching probability top_p. With `eos`, a row stops after producing
        it and the rest of the row is eos. Each step re-runs the model over
        its compiled window, so prompt plus new tokens must fit it.
        An encoder-decoder (T5, BART) takes `encoder_input_ids` [batch,
        seq] and `prompt` is the decoder's start, usually
        [[decoder_start_token_id]] per row; encoder row b is its first
        encoder_lengths[b] ids (default: all), which needs a model compiled
        with an attention_mask input unless they fill its width.
        `last_generate_timing` then holds (prefill ms, decode ms, steps)."""
        if self._m is None:
            raise AttncError("the model is closed")
        ids = np.asarray(prompt)
        if ids.ndim == 1:
            ids = ids[None, :]
        if ids.ndim != 2 or ids.dtype.kind not in "iu" or ids.size == 0:
            raise AttncError("prompt must be a non-empty integer array "
                             "[batch, width], got %s %s"
                             % (ids.dtype, ids.shape))
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        batch, width = ids.shape
        if lengths is None:
            lengths = np.full(batch, width, np.int64)
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        if lengths.shape != (batch,):
            raise AttncError("lengths must have shape (%d,), got %s"
                             % (batch, lengths.shape))
        max_new_tokens = int(max_new_tokens)
        if max_new_tokens < 1:
            raise AttncError("max_new_tokens must be >= 1, got %d"
                             % max_new_tokens)
        encoder = None
        if encoder_input_ids is not None:
            encoder = np.asarray(encoder_input_ids)
            if encoder.ndim == 1:
                encoder = encoder[None, :]
            if (encoder.ndim != 2 or encoder.dtype.kind not in "iu"
                    or encoder.shape[0] != batch):
                raise AttncError("encoder_input_ids must be an integer "
                                 "array [%d, seq], got %s %s"
                                 % (batch, encoder.dtype, encoder.shape))
            encoder = np.ascontiguousarray(encoder, dtype=np.int64)
            if encoder_lengths is not None:
                encoder_lengths = np.ascontiguousarray(encoder_lengths,
                                                       dtype=np.int64)
                if encoder_lengths.shape != (batch,):
                    raise AttncError("encoder_lengths must have shape (%d,), "
                                     "got %s" % (batch,
                                                 encoder_lengths.shape))
        elif encoder_lengths is not None:
            raise AttncError("encoder_lengths needs encoder_input_ids")
        session = self._lib.attnrt_session_create(self._m, int(seed))
        if not session:
            self._check(1)
        try:
            if encoder is not None:
                self._check(self._lib.attnrt_session_set_encoder_input(
                    session, encoder.ctypes.data,
                    None if encoder_lengths is None
                    else encoder_lengths.ctypes.data, *encoder.shape))
            out = np.empty((batch, max_new_tokens), np.int64)
            sampling = _Sampling(float(temperature), int(top_k), float(top_p))
            self._check(self._lib.attnrt_session_generate(
                session, ids.ctypes.data, lengths.ctypes.data, batch, width,
                max_new_tokens, ctypes.byref(sampling),
                -1 if eos is None else int(eos), out.ctypes.data))
            prefill, decode = ctypes.c_double(), ctypes.c_double()
            steps = ctypes.c_int64()
            self._lib.attnrt_session_timing(session, ctypes.byref(prefill),
                                            ctypes.byref(decode),
                                            ctypes.byref(steps))
            self._thread.generate_timing = (prefill.value, decode.value,
                                         steps.value)
            return out
        finally:
            self._lib.attnrt_session_free(session)

    def generate_many(self, prompts, max_new_tokens, *, temperature=0.0,
                      top_k=0, top_p=1.0, seed=0, eos=None,
                      prompt_chunk=0, prefill=None, pad_budget=0):
        """Generates for any number of prompts with continuous batching
        over a KV-cache step (attn-compile --kv-cache): each of the model's
        compiled rows is a slot; a prompt waits for a free slot, starts
        there at its own position while the others go on, and leaves it
        when it produced `eos` or its `max_new_tokens` (an int, or one per
        prompt). `prompts` is a list of 1-D token id sequences. Returns one
        int64 array of new tokens per prompt (ending with eos when it
        stopped there). Greedy results equal each prompt generated alone;
        sampling (temperature > 0) draws every slot's token from one
        seeded generator, so a prompt's tokens depend on what shared its
        steps. Every run feeds all rows the same number of tokens, so a
        new prompt fed whole pads the running rows to its length;
        `prompt_chunk` > 0 feeds at most that many prompt tokens per run
        (1: no padding, as a step compiled for one token does).
        `prefill`: a Model of the same checkpoint compiled as a one-row
        step with a run-time token count (input_shape={"input_ids":
        (1, None)}, the same kv_cache; logits="last" suits it), CPU only:
        each prompt then runs alone through it over its slot's rows of the
        caches (`prompt_chunk` tokens per run, 0: all), and the running
        slots take one token per run of this model, so no row computes
        padding for another's prompt.
        `pad_budget` (with `prefill`): a cost rule for short prompts. A
        prompt of n tokens with slots x n <= pad_budget is fed in this
        model's run beside the running slots' next tokens (padded to n)
        instead of in a run of `prefill` of its own, which reads all the
        weights once more; 0: every prompt goes through `prefill`. The
        tokens are the same either way (docs/serving.md gives measured
        budgets).
        `last_generate_many_stats` then holds (model runs, tokens
        generated, milliseconds)."""
        if self._m is None:
            raise AttncError("the model is closed")
        requests = []
        for i, p in enumerate(prompts):
            ids = np.ascontiguousarray(np.asarray(p), dtype=np.int64)
            if ids.ndim != 1 or ids.size == 0:
                raise AttncError("prompt %d must be a non-empty 1-D token id "
                                 "sequence, got shape %s" % (i, ids.shape))
            requests.append(ids)
        if not requests:
            raise AttncError("generate_many needs at least one prompt")
        limits = (list(max_new_tokens)
                  if isinstance(max_new_tokens, (list, tuple, np.ndarray))
                  else [max_new_tokens] * len(requests))
        if len(limits) != len(requests) or any(int(n) < 1 for n in limits):
            raise AttncError("max_new_tokens must be >= 1, one int or one "
                             "per prompt (%d)" % len(requests))
        lib, check = self._lib, self._check
        one_row = self._slot_prefill(prefill) if prefill is not None else None
        session = lib.attnrt_session_create(self._m, int(seed))
        if not session:
            check(1)
        try:
            if one_row:
                check(lib.attnrt_session_set_slot_prefill(session, one_row))
                check(lib.attnrt_session_set_slot_pad_budget(
                    session, int(pad_budget)))
            max_batch, capacity = ctypes.c_int64(), ctypes.c_int64()
            lib.attnrt_session_shape(session, ctypes.byref(max_batch),
                                     ctypes.byref(capacity), None)
            slots = max_batch.value
            for i, ids in enumerate(requests):
                if ids.size + int(limits[i]) > capacity.value:
                    raise AttncError(
                        "prompt %d: %d tokens plus %d new tokens exceed the "
                        "model's %d positions (compile it with a larger "
                        "--kv-cache)" % (i, ids.size, int(limits[i]),
                                         capacity.value))
            sampling = _Sampling(float(temperature), int(top_k), float(top_p))
            results = [[] for _ in requests]
            owner = [None] * slots
            # Slots still feeding their prompt (not yet ready once).
            feeding = [False] * slots
            left = [0] * slots  # their prompt tokens not yet fed
            waiting = list(range(len(requests)))[::-1]
            next_ids = np.zeros(slots, np.int64)
            ready = np.zeros(slots, np.int64)
            runs = produced = 0
            began = time.perf_counter()
            while waiting or any(o is not None for o in owner):
                # Free slots take waiting prompts between steps.
                for slot in range(slots):
                    if owner[slot] is None and waiting:
                        r = waiting.pop()
                        check(lib.attnrt_session_slot_start(
                            session, slot, requests[r].ctypes.data,
                            requests[r].size))
                        owner[slot] = r
                        feeding[slot] = True
                        left[slot] = requests[r].size
                check(lib.attnrt_session_slots_step(
                    session, next_ids.ctypes.data, int(prompt_chunk),
                    ready.ctypes.data))
                if one_row:
                    # A run of this model for the running slots and the
                    # prompts within the pad budget, one per other prompt.
                    active = [o is not None for o in owner]
                    fed = [min(left[b], prompt_chunk or left[b])
                           if feeding[b] else 0 for b in range(slots)]
                    padded = [n and slots * n <= pad_budget for n in fed]
                    runs += int(any((a and not f) or p for a, f, p in
                                    zip(active, feeding, padded)))
                    runs += sum(1 for f, p in zip(feeding, padded)
                                if f and not p)
                    left = [n - f for n, f in zip(left, fed)]
                else:
                    runs += 1
                check(lib.attnrt_session_sample(
                    session, ctypes.byref(sampling), next_ids.ctypes.data))
                for slot in range(slots):
                    r = owner[slot]
                    if r is None or not ready[slot]:
                        continue
                    feeding[slot] = False
                    token = int(next_ids[slot])
                    results[r].append(token)
                    produced += 1
                    if ((eos is not None and token == int(eos))
                            or len(results[r]) == int(limits[r])):
                        check(lib.attnrt_session_slot_free(session, slot))
                        owner[slot] = None
            self._thread.generate_many_stats = (
                runs, produced, (time.perf_counter() - began) * 1e3)
        finally:
            lib.attnrt_session_free(session)
        return [np.array(r, np.int64) for r in results]

    def _slot_prefill(self, prefill):
        """`prefill`'s compiled code opened by this library's runtime, its
        weights bound (kept for the next generate_many with it): a session
        runs it over rows of its own caches."""
        if not isinstance(prefill, Model) or prefill._m is None:
            raise AttncError("prefill must be an open attnc.Model (a "
                             "one-row step of the same checkpoint)")
        cached = getattr(self, "_prefill", None)
        if cached is not None and cached[0] is prefill:
            return cached[1]
        self._close_prefill()
        lib = self._lib
        manifest, invoke = ctypes.c_char_p(), ctypes.c_void_p()
        prefill._lib.attnrt_linked_entry(ctypes.byref(manifest),
                                         ctypes.byref(invoke))
        err = ctypes.create_string_buffer(1024)
        one_row = lib.attnrt_open(manifest, invoke, err, len(err))
        if not one_row:
            raise AttncError("prefill: " + err.value.decode(errors="replace"))
        if prefill._weights is not None and lib.attnrt_bind_weights(
                one_row, os.fsencode(str(prefill._weights))):
            message = lib.attnrt_last_error(one_row)
            lib.attnrt_close(one_row)
            _raise_failure(b"prefill: " + message)
        # The Model is kept too: its library holds the compiled code.
        self._prefill = (prefill, one_row)
        return one_row

    def _close_prefill(self):
        cached = getattr(self, "_prefill", None)
        self._prefill = None
        if cached is not None:
            self._lib.attnrt_close(cached[1])

    @property
    def last_generate_many_stats(self):
        """(model runs, tokens generated, milliseconds) of this thread's
        last generate_many."""
        return getattr(self._thread, "generate_many_stats", None)

    def reset_state(self):
        """Zeroes the state buffers (KV caches) of this thread's context."""
        if self._m is None:
            raise AttncError("the model is closed")
        self._check(self._lib.attnrt_reset_state(self._m))

    @property
    def last_run_ms(self):
        """The duration of this thread's last successful run, in
        milliseconds."""
        return self._lib.attnrt_last_run_ms(self._m)

    @property
    def last_generate_timing(self):
        """This thread's last successful generate: (prefill ms, decode
        ms, decode steps); None before one."""
        return getattr(self._thread, "generate_timing", None)

    def close(self):
        if getattr(self, "_m", None):
            self._close_prefill()
            self._lib.attnrt_close(self._m)
        self._m = None


class _ModelCalls:
    """The model-level C calls (this thread's implicit context) for
    Model._run."""

    def __init__(self, model):
        lib, m = model._lib, model._m
        self._set_input = lambda *a: lib.attnrt_set_input_shaped(m, *a)
        self._invoke = lambda: lib.attnrt_run(m)
        self._output_shape = lambda i: lib.attnrt_output_shape(m, i)
        self._get_output = lambda *a: lib.attnrt_get_output(m, *a)
        self._check = model._check


class Context(_Closing):
    """An execution context of a Model (Model.context()): runs with its own
    inputs, outputs and state. Contexts of one model may run in different
    threads at once; one context's calls take turns."""

    def __init__(self, model):
        self._model = model
        self._lib = model._lib
        self._c = self._lib.attnrt_context_create(model._m)
        if not self._c:
            model._check(1)
        # What Model._run calls.
        lib, c = self._lib, self._c
        self._set_input = lambda *a: lib.attnrt_context_set_input_shaped(c, *a)
        self._invoke = lambda: lib.attnrt_context_run(c)
        self._output_shape = lambda i: lib.attnrt_context_output_shape(c, i)
        self._get_output = lambda *a: lib.attnrt_context_get_output(c, *a)

    def _check(self, status):
        if status != 0:
            _raise_failure(self._lib.attnrt_context_last_error(self._c))

    def _handle(self):
        if self._c is None:
            raise AttncError("the context is closed")
        if self._model._m is None:
            raise AttncError("the model is closed")
        return self._c

    def run(self, *args, **kwargs):
        """Model.run in this context."""
        self._handle()
        return self._model._run(self, args, kwargs)

    __call__ = run

    def reset_state(self):
        """Zeroes this context's state buffers (its KV caches)."""
        self._check(self._lib.attnrt_context_reset_state(self._handle()))

    @property
    def last_run_ms(self):
        """The duration of this context's last successful run, in
        milliseconds."""
        return self._lib.attnrt_context_last_run_ms(self._handle())

    def close(self):
        c = getattr(self, "_c", None)
        self._c = None
        if c and self._model._m is not None:
            self._lib.attnrt_context_free(c)


def load(library, weights=None, tokenizer=None):
    """Opens a library written by `compile` (or attn-compile --shared) and
    binds its weights: `weights` (a .safetensors file, or the shard index
    model.safetensors.index.json of a sharded checkpoint, whose shards lie
    beside it), else <library>.safetensors beside the library.

    `tokenizer`, a Hugging Face checkpoint directory holding tokenizer.json
    (or that file's path), gives the model text in and out
    (`Model.generate_text`): the tokenizer is read with the `tokenizers`
    package (needed only then), and the token ids of generation_config.json
    beside it (eos_token_id, pad_token_id, bos_token_id,
    decoder_start_token_id, forced_bos_token_id, forced_eos_token_id; those
    it lacks from config.json) become
    `Model.generation_config`. `Model.tokenizer` is the
    tokenizers.Tokenizer."""
    return Model(library, weights, tokenizer)
