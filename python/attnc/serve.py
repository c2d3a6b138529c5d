"""Serving a compiled model with Ray Serve.

    import ray
    from ray import serve
    import attnc.serve

    ray.init()
    app = attnc.serve.deployment("libgpt2.so", tokenizer="gpt2-checkpoint",
                                 num_replicas=2)
    serve.run(app, route_prefix="/")
    # POST /v1/completions {"prompt": "Once upon a time", "max_tokens": 16}

An HTTP replica takes each request and passes it to one of the model's
replicas, each of which loads the library once (`attnc.load`); a request
whose model replica stops while answering is sent again (`retries`), or
gets a 503 that says so. The routes:

- POST /v1/completions (a decoder or an encoder-decoder loaded with a
  tokenizer): OpenAI-style completions. Fields: prompt (a str or a list of
  str), max_tokens (default 16), temperature (default 0: greedy), top_p,
  top_k, seed, stop (a str or a list), stream, and model, n (1 only) and
  user, which are accepted and otherwise ignored. The answer has
  choices[].text, choices[].finish_reason ("stop" or "length") and usage
  (prompt, completion and total tokens). With "stream": true the text
  comes as server-sent events, one per piece of text as tokens are
  generated, then one with the finish reason and usage, then [DONE].
- POST /v1/embeddings (an encoder): {"input": a str, a list of str (with a
  tokenizer), a list of token ids or a list of such lists, "pooling":
  "mean" (default, over the tokens), "first" or "none" (every token's
  vector)}; the answer's data[].embedding is the model's hidden state.
- GET /v1/models: the model, its kind and this replica's id.

A decoder compiled as a KV-cache step serves greedy completions, streamed
or not, by continuous batching over its session's slots (one per compiled
row): a thread of the replica owns the session; a request's prompts join
the queue at any time and take a free slot between two decode steps,
starting at their own position while the others go on, and a prompt that
ends frees its slot at once, so a short request never waits for a long
one to end. With `prefill=` (a one-row build) a new prompt runs alone over
its slot's cache rows, or padded into the step's run when short
(`pad_budget`). Each answer's `attnc_schedule` gives, per prompt, its slot
and the replica's decode steps of its first and last tokens.
Other requests that arrive together are batched with Ray Serve's
`@serve.batch`: an encoder-decoder's (or a full-sequence decoder's) greedy
completions with the same max_tokens and stop strings run as one
generate_text over their prompts (in batches of the rows the model was
compiled for), embeddings as one run of the model; sampled completions run
on their own, so that a seed gives the texts that generate_text gives for
that seed. A request that is not well formed (JSON, a field, its type, a
prompt too long for the compiled sequence) gets a 400 with a message, and
the replica serves on. docs/serving.md has more.

Ray is an optional dependency, imported when a deployment is made.
"""

import asyncio
import collections
import ctypes
import json
import os
import threading
import time
import uuid

import numpy as np

import attnc
from attnc import AttncError
from attnc._text import _TextPieces

__all__ = ["deployment"]

# The fields of a completion request; others are refused.
_COMPLETION_FIELDS = ("prompt", "max_tokens", "temperature", "top_p",
                      "top_k", "seed", "stop", "stream", "model", "n",
                      "user")
_EMBEDDING_FIELDS = ("input", "pooling", "model", "user")


def _completion_event(request_id, created, model, text, finish=None,
                      usage=None):
    """One server-sent event of a streamed OpenAI-style completion."""
    chunk = {"id": request_id, "object": "text_completion",
             "created": created, "model": model,
             "choices": [{"index": 0, "text": text, "logprobs": None,
                          "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return "data: %s\n\n" % json.dumps(chunk)


def _serve():
    """Ray Serve and Starlette's responses, or a clear error."""
    try:
        from ray import serve
        from starlette.responses import JSONResponse, StreamingResponse
    except ImportError:
        raise AttncError("attnc.serve needs Ray Serve, which is not "
                         "installed (pip install 'ray[serve]')") from None
    return serve, JSONResponse, StreamingResponse


class _BadRequest(Exception):
    """A request that is not well formed: a 400 with this message."""


def _error(message, kind="invalid_request_error"):
    return {"error": {"message": message, "type": kind}}


def _parse(raw):
    """A request's JSON object."""
    try:
        body = json.loads(raw)
    except ValueError as e:
        raise _BadRequest("the body is not JSON: %s" % e) from None
    if not isinstance(body, dict):
        raise _BadRequest("the body must be a JSON object")
    return body


def _field(body, name, kinds, default, check=None, what=None):
    """body[name] when of one of `kinds` (bool is not an int), else a
    _BadRequest."""
    value = body.get(name, default)
    if value is default:
        return value
    if isinstance(value, bool) and bool not in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if ok and check is not None:
        ok = check(value)
    if not ok:
        raise _BadRequest("'%s' must be %s, got %s" % (name, what,
                                                       json.dumps(value)))
    return value


def _required(body, name, fields):
    """body[name], in a body of only the known `fields`; else a
    _BadRequest."""
    unknown = sorted(set(body) - set(fields))
    if unknown:
        raise _BadRequest("unknown field '%s' (the fields: %s)"
                          % (unknown[0], ", ".join(fields)))
    if name not in body:
        raise _BadRequest("'%s' is missing" % name)
    return body[name]


def _strings(value):
    return isinstance(value, list) and value and all(
        isinstance(v, str) for v in value)


def _token_rows(value):
    return isinstance(value, list) and value and all(
        isinstance(row, list) and row and all(
            isinstance(t, int) and not isinstance(t, bool) for t in row)
        for row in value)


class _Completion:
    """A parsed completion request."""

    def __init__(self, body, max_tokens_limit):
        prompt = _required(body, "prompt", _COMPLETION_FIELDS)
        if not (isinstance(prompt, str) or _strings(prompt)):
            raise _BadRequest("'prompt' must be a str or a non-empty list of "
                              "str")
        self.prompts = [prompt] if isinstance(prompt, str) else prompt
        self.max_tokens = _field(
            body, "max_tokens", (int,), 16,
            lambda v: 1 <= v <= max_tokens_limit,
            "an int from 1 to %d" % max_tokens_limit)
        self.temperature = float(_field(
            body, "temperature", (int, float), 0.0, lambda v: 0 <= v <= 100,
            "a number from 0 to 100"))
        self.top_p = float(_field(body, "top_p", (int, float), 1.0,
                                  lambda v: 0 < v <= 1,
                                  "a number in (0, 1]"))
        self.top_k = _field(body, "top_k", (int,), 0, lambda v: v >= 0,
                            "an int >= 0")
        self.seed = _field(body, "seed", (int,), 0,
                           lambda v: 0 <= v < 2 ** 64, "an int >= 0")
        stop = _field(body, "stop", (str, list), None,
                      lambda v: (isinstance(v, str) and v) or (
                          _strings(v) and all(v) and len(v) <= 4),
                      "a non-empty str or a list of at most 4 of them")
        self.stop = [stop] if isinstance(stop, str) else stop
        self.stream = _field(body, "stream", (bool,), False, None,
                             "true or false")
        _field(body, "n", (int,), 1, lambda v: v == 1, "1")
        _field(body, "model", (str,), None, None, "a str")
        _field(body, "user", (str,), None, None, "a str")
        if self.stream and len(self.prompts) != 1:
            raise _BadRequest("'stream' takes one prompt, got %d"
                              % len(self.prompts))

    def options(self):
        return dict(temperature=self.temperature, top_k=self.top_k,
                    top_p=self.top_p, seed=self.seed, stop=self.stop)

    def batch_key(self):
        """Requests of one key run as one generate_text: greedy ones with
        the same length and stops (their texts do not depend on the
        others'); a sampled one alone (its texts follow its seed)."""
        if self.temperature > 0:
            return id(self)
        return (self.max_tokens, tuple(self.stop or ()))


class _SlotJob:
    """One prompt of a completion in the slot scheduler: its token ids and
    options, its tokens so far, and the asyncio queue (of the event loop
    that submitted it) that gets its events: ("step", tokens, stopped
    text) after each token when streamed, then ("done", TextResult) or
    ("error", exception)."""

    def __init__(self, ids, completion, loop, stream):
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.max_tokens = completion.max_tokens
        self.stops = completion.stop or []
        self.loop = loop
        self.queue = asyncio.Queue()
        self.stream = stream
        self.tokens = []
        self.text = None  # the text, once an eos or a stop string ends it
        self.slot = self.first_step = self.last_step = None

    def emit(self, *event):
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
        except RuntimeError:  # the request's event loop is gone
            pass


class _SlotScheduler:
    """Continuous batching of a replica's greedy completions over the
    runtime's session slots (attnrt_session_slot_*): a thread of its own
    owns one session of the model; each of the model's compiled rows is a
    slot. Requests enqueue their prompts at any time; between two decode
    steps every free slot takes the oldest waiting prompt, which starts at
    its own position while the others go on, and a prompt that ends (an
    eos token, a stop string, max_tokens) frees its slot at once. With a
    one-row build (`prefill`), a new prompt runs alone over its slot's
    cache rows unless it is short enough for `pad_budget` (slots x its
    tokens <= pad_budget), when it is padded into the step's run instead
    (attnrt_session_set_slot_pad_budget). Greedy tokens do not depend on
    what shares a step, so each prompt's text is generate_text's."""

    def __init__(self, model, prefill=None, pad_budget=0):
        self.model = model
        lib = model._lib
        one_row = model._slot_prefill(prefill) if prefill is not None \
            else None
        self.session = self._open(one_row, pad_budget)
        rows = ctypes.c_int64()
        lib.attnrt_session_shape(self.session, ctypes.byref(rows), None,
                                 None)
        self.slots = rows.value
        self.one_row, self.pad_budget = one_row, pad_budget
        config = model.generation_config
        self.eos = frozenset(config.get("eos_token_id", ()))
        self.forced_eos = config.get("forced_eos_token_id", ())
        self.bos = config.get("bos_token_id")
        self.steps = 0  # decode steps run so far
        self._next_ids = np.zeros(self.slots, np.int64)
        self._ready = np.zeros(self.slots, np.int64)
        self.broken = None
        self.cond = threading.Condition()
        self.waiting = collections.deque()
        self.closed = False
        self.thread = threading.Thread(target=self._loop, daemon=True,
                                       name="attnc-slots")
        self.thread.start()

    def _open(self, one_row, pad_budget):
        """A session ready for slots, or AttncError (the model does not run
        slots: a full-sequence model, an encoder-decoder)."""
        lib, model = self.model._lib, self.model
        session = lib.attnrt_session_create(model._m, 0)
        if not session:
            model._check(1)
        probe = np.zeros(1, np.int64)
        try:
            model._check(lib.attnrt_session_slot_start(
                session, 0, probe.ctypes.data, 1))
            model._check(lib.attnrt_session_slot_free(session, 0))
            if one_row:
                model._check(lib.attnrt_session_set_slot_prefill(session,
                                                                 one_row))
                model._check(lib.attnrt_session_set_slot_pad_budget(
                    session, int(pad_budget)))
        except AttncError:
            lib.attnrt_session_free(session)
            raise
        return session

    def submit(self, encoded, completion, stream=False):
        """The jobs of a completion's prompts (token id lists), queued."""
        loop = asyncio.get_running_loop()
        jobs = []
        for i, ids in enumerate(encoded):
            if not ids:
                if self.bos is None:
                    raise _BadRequest("prompt %d encodes to no tokens and "
                                      "there is no bos_token_id to start it"
                                      % i)
                ids = [self.bos]
            jobs.append(_SlotJob(ids, completion, loop, stream))
        with self.cond:
            if self.closed:
                raise AttncError(self.broken or
                                 "the replica is shutting down")
            self.waiting.extend(jobs)
            self.cond.notify()
        return jobs

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join(timeout=5)

    def _decode(self, tokens):
        return self.model.tokenizer.decode(tokens, skip_special_tokens=True)

    def _result(self, job):
        text = self._decode(job.tokens) if job.text is None else job.text
        cut = min((text.find(s) for s in job.stops if s in text),
                  default=len(text))
        return attnc.TextResult(text[:cut], int(job.ids.size),
                                len(job.tokens),
                                "length" if job.text is None else "stop")

    def _loop(self):
        owner = [None] * self.slots
        while True:
            with self.cond:
                while not self.waiting and not any(owner):
                    if self.closed:
                        self.model._lib.attnrt_session_free(self.session)
                        self.session = None
                        return
                    self.cond.wait()
                for slot in range(self.slots):
                    if owner[slot] is None and self.waiting:
                        owner[slot] = self.waiting.popleft()
            try:
                self._step(owner)
            except Exception as e:  # the step's error is every job's
                error = e if isinstance(e, AttncError) else AttncError(
                    "%s: %s" % (type(e).__name__, e))
                for job in owner:
                    if job is not None:
                        job.emit("error", error)
                owner = [None] * self.slots
                self.model._lib.attnrt_session_free(self.session)
                try:
                    self.session = self._open(self.one_row, self.pad_budget)
                except Exception as e:
                    # No session: this replica fails every request that
                    # comes, rather than leaving it waiting.
                    with self.cond:
                        self.closed = True
                        self.broken = "the replica's session could not be " \
                            "opened again: %s" % e
                        for job in self.waiting:
                            job.emit("error", AttncError(self.broken))
                        self.waiting.clear()
                    self.session = None
                    return

    def _step(self, owner):
        """Starts the prompts that took a slot, runs one step and hands
        out its tokens; a finished prompt frees its slot."""
        lib, model = self.model._lib, self.model
        for slot, job in enumerate(owner):
            if job is None or job.slot is not None:
                continue
            job.slot = slot
            if lib.attnrt_session_slot_start(self.session, slot,
                                             job.ids.ctypes.data,
                                             job.ids.size):
                # This prompt's error alone (the others go on).
                job.emit("error", AttncError(
                    (lib.attnrt_last_error(model._m) or
                     b"slot_start failed").decode(errors="replace")))
                owner[slot] = None
        if not any(owner):
            return
        next_ids, ready = self._next_ids, self._ready
        model._check(lib.attnrt_session_slots_step(
            self.session, next_ids.ctypes.data, 0, ready.ctypes.data))
        model._check(lib.attnrt_session_sample(self.session, None,
                                               next_ids.ctypes.data))
        self.steps += 1
        for slot, job in enumerate(owner):
            if job is None or not ready[slot]:
                continue
            if job.first_step is None:
                job.first_step = self.steps
            # As transformers' forced EOS logits processor.
            if len(job.tokens) + 1 == job.max_tokens and self.forced_eos:
                next_ids[slot] = min(self.forced_eos)
            token = int(next_ids[slot])
            job.tokens.append(token)
            if token in self.eos:
                job.text = self._decode(job.tokens)
            elif job.stops:
                text = self._decode(job.tokens)
                if any(s in text for s in job.stops):
                    job.text = text
            if job.text is None and len(job.tokens) < job.max_tokens:
                if job.stream:
                    job.emit("step", list(job.tokens), None)
                continue
            model._check(lib.attnrt_session_slot_free(self.session, slot))
            owner[slot] = None
            job.last_step = self.steps
            job.emit("done", self._result(job))


def _completion_json(request_id, created, model, results):
    usage = dict(prompt_tokens=sum(r.prompt_tokens for r in results),
                 completion_tokens=sum(r.completion_tokens for r in results))
    usage["total_tokens"] = usage["prompt_tokens"] + \
        usage["completion_tokens"]
    return {"id": request_id, "object": "text_completion",
            "created": created, "model": model,
            "choices": [{"index": i, "text": r.text, "logprobs": None,
                         "finish_reason": r.finish_reason}
                        for i, r in enumerate(results)],
            "usage": usage}


class _Server:
    """A replica: one loaded model (see the module's docstring)."""

    def __init__(self, library, weights=None, tokenizer=None, name=None,
                 max_batch_size=None, batch_wait_timeout_s=0.01,
                 max_tokens_limit=None, prefill=None, pad_budget=0):
        self.model = attnc.load(library, weights=weights, tokenizer=tokenizer)
        self.slots = None
        self.name = name or os.path.basename(str(library))
        names = {i.name for i in self.model.inputs}
        self.decoder = any(o.name == "logits" for o in self.model.outputs) \
            or "decoder_input_ids" in names
        self.encoder_decoder = "decoder_input_ids" in names
        rows = self.model.inputs[0].shape[0] or 8
        if self.decoder:
            if self.model.tokenizer is None:
                raise AttncError("a decoder is served with its tokenizer: "
                                 "deployment(..., tokenizer=CHECKPOINT_DIR)")
            self.capacity = self._capacity()
            # At least one prompt token (a decoder) or the start token (an
            # encoder-decoder's decoder) comes first.
            limit = self.capacity - 1
            self.max_tokens_limit = min(max_tokens_limit or limit, limit)
            if not self.encoder_decoder:
                # A KV-cache step serves greedy completions from its slots;
                # a full-sequence model (no slots) as fixed batches.
                one_row = None if prefill is None else attnc.load(
                    prefill, weights=weights)
                try:
                    self.slots = _SlotScheduler(self.model, one_row,
                                                pad_budget)
                except AttncError:
                    if one_row is not None:
                        raise
        else:
            self._output = next(
                (o.name for o in self.model.outputs
                 if o.name == "last_hidden_state"),
                next((o.name for o in self.model.outputs
                      if len(o.shape) == 3), None))
            if self._output is None:
                raise AttncError("an encoder is served by its hidden states, "
                                 "an output [batch, seq, hidden]; the "
                                 "model's outputs: %s" % ", ".join(
                                     o.name for o in self.model.outputs))
            fed = {"input_ids", "attention_mask", "token_type_ids"}
            if not names <= fed or "input_ids" not in names:
                raise AttncError("the server feeds an encoder input_ids and, "
                                 "when it takes them, attention_mask and "
                                 "token_type_ids; the model takes %s"
                                 % ", ".join(sorted(names)))
        self._complete_batch.set_max_batch_size(max_batch_size or rows)
        self._complete_batch.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self._embed_batch.set_max_batch_size(max_batch_size or rows)
        self._embed_batch.set_batch_wait_timeout_s(batch_wait_timeout_s)
        try:
            self.replica = _serve()[0].get_replica_context() \
                .replica_id.unique_id
        except Exception:  # the class used outside Ray Serve
            self.replica = None

    def __del__(self):
        slots = getattr(self, "slots", None)
        if slots is not None:
            slots.close()

    def _capacity(self):
        """The decoder positions a session holds per row."""
        lib = self.model._lib
        session = lib.attnrt_session_create(self.model._m, 0)
        if not session:
            self.model._check(1)
        try:
            rows, capacity = ctypes.c_int64(), ctypes.c_int64()
            lib.attnrt_session_shape(session, ctypes.byref(rows),
                                     ctypes.byref(capacity), None)
            return capacity.value
        finally:
            lib.attnrt_session_free(session)

    async def answer(self, method, path, raw):
        """(HTTP status, JSON payload) of a request (not a streamed
        completion: see stream)."""
        path = path.rstrip("/")
        try:
            if path.endswith("/v1/models"):
                if method != "GET":
                    raise _BadRequest("/v1/models takes GET")
                return 200, {"object": "list", "data": [{
                    "id": self.name, "object": "model",
                    "kind": "decoder" if self.decoder else "encoder",
                    "replica": self.replica, "pid": os.getpid()}]}
            if path.endswith("/v1/completions"):
                if not self.decoder:
                    return 404, _error("this model is an encoder: POST "
                                       "/v1/embeddings", "not_found")
                return 200, await self._completions(method, raw)
            if path.endswith("/v1/embeddings"):
                if self.decoder:
                    return 404, _error("this model is a decoder: POST "
                                       "/v1/completions", "not_found")
                return 200, await self._embeddings(method, raw)
            return 404, _error("no route %s %s (POST /v1/completions or "
                               "/v1/embeddings, GET /v1/models)"
                               % (method, path), "not_found")
        except (_BadRequest, AttncError) as e:
            return 400, _error(str(e))

    async def stream(self, raw):
        """A streamed completion: first (status, payload), an error's or
        (200, None), then on success its server-sent events."""
        try:
            completion = _Completion(_parse(raw), self.max_tokens_limit)
            encoded = self._check_lengths(completion)
            if self._slotted(completion):
                events = await self._slot_stream(
                    completion, encoded, "cmpl-" + uuid.uuid4().hex,
                    int(time.time()))
            else:
                events = await self._stream(completion, "cmpl-" +
                                            uuid.uuid4().hex,
                                            int(time.time()))
        except (_BadRequest, AttncError) as e:
            yield 400, _error(str(e))
            return
        yield 200, None
        async for event in events:
            yield event

    async def _completions(self, method, raw):
        if method != "POST":
            raise _BadRequest("/v1/completions takes POST")
        completion = _Completion(_parse(raw), self.max_tokens_limit)
        if completion.stream:
            raise _BadRequest("a streamed completion goes through stream()")
        encoded = self._check_lengths(completion)
        request_id = "cmpl-" + uuid.uuid4().hex
        created = int(time.time())
        if self._slotted(completion):
            jobs = self.slots.submit(encoded, completion)
            results = []
            for job in jobs:
                kind, value = (await job.queue.get())[:2]
                if kind == "error":
                    raise value
                results.append(value)
            answer = _completion_json(request_id, created, self.name,
                                      results)
            # Where each prompt ran: its slot and the replica's decode
            # steps that gave its first and last tokens.
            answer["attnc_schedule"] = [
                {"slot": j.slot, "first_step": j.first_step,
                 "last_step": j.last_step} for j in jobs]
            return answer
        results = await self._complete_batch(completion)
        if isinstance(results, Exception):
            raise results
        return _completion_json(request_id, created, self.name, results)

    def _slotted(self, completion):
        """Whether a completion runs in the slots: greedy ones do when the
        model runs slots; sampled ones run on their own, so that a seed
        gives generate_text's texts whatever else is being served."""
        return self.slots is not None and completion.temperature == 0

    def _check_lengths(self, completion):
        """The prompts' token ids (None for an encoder-decoder). A prompt
        too long for the compiled sequence is the client's error, found
        before it joins a batch."""
        if self.encoder_decoder:
            return None  # generate_text checks the encoder's width itself
        encoded = [e.ids for e in self.model.tokenizer.encode_batch(
            completion.prompts)]
        for i, ids in enumerate(encoded):
            if len(ids) + completion.max_tokens > self.capacity:
                raise _BadRequest(
                    "prompt %d is %d tokens; with max_tokens %d that "
                    "exceeds the model's %d positions"
                    % (i, len(ids), completion.max_tokens, self.capacity))
        return encoded

    async def _complete_batch_impl(self, completions):
        """TextResults (or the exception) of each completion: those of a
        key in one generate_text over all their prompts."""
        groups = {}
        for c in completions:
            groups.setdefault(c.batch_key(), []).append(c)
        answers = {}
        for group in groups.values():
            prompts = [p for c in group for p in c.prompts]
            first = group[0]
            try:
                results = await asyncio.to_thread(
                    self.model.generate_text_details, prompts,
                    first.max_tokens, **first.options())
            except AttncError as e:
                if len(group) == 1:
                    answers[id(first)] = e
                    continue
                # One request's error is its own: run them one by one.
                results = None
                for c in group:
                    try:
                        answers[id(c)] = await asyncio.to_thread(
                            self.model.generate_text_details, c.prompts,
                            c.max_tokens, **c.options())
                    except AttncError as e:
                        answers[id(c)] = e
            if results is not None:
                at = 0
                for c in group:
                    answers[id(c)] = results[at:at + len(c.prompts)]
                    at += len(c.prompts)
        return [answers[id(c)] for c in completions]

    async def _stream(self, completion, request_id, created):
        """The server-sent events of a streamed completion. Its first step
        (and so its errors) runs before the response starts."""
        pieces = self.model.stream_text(
            completion.prompts[0], completion.max_tokens,
            **completion.options())
        done = object()
        first = await asyncio.to_thread(next, pieces, done)

        def event(text, finish=None, usage=None):
            return _completion_event(request_id, created, self.name, text,
                                     finish, usage)

        async def events():
            try:
                item = first
                while item is not done:
                    if isinstance(item, attnc.TextResult):
                        usage = _completion_json(
                            request_id, created, self.name, [item])["usage"]
                        yield event("", item.finish_reason, usage)
                    else:
                        yield event(item)
                    item = await asyncio.to_thread(next, pieces, done)
                yield "data: [DONE]\n\n"
            finally:
                try:
                    pieces.close()  # frees its session
                except ValueError:  # still running in its thread
                    pass

        return events()

    async def _slot_stream(self, completion, encoded, request_id, created):
        """_stream of a completion run in the slots: its events come from
        the scheduler's thread, step by step. Its first token (and so its
        errors) comes before the response starts."""
        job, = self.slots.submit(encoded, completion, stream=True)
        pieces = _TextPieces(self.model.tokenizer)
        first = await job.queue.get()
        if first[0] == "error":
            raise first[1]

        def event(text, finish=None, usage=None):
            return _completion_event(request_id, created, self.name, text,
                                     finish, usage)

        async def events():
            item = first
            while True:
                kind = item[0]
                if kind == "error":
                    yield "data: %s\n\n" % json.dumps(_error(
                        str(item[1]), "server_error"))
                    return
                if kind == "done":
                    piece = pieces.done(item[1])
                    if piece:
                        yield event(piece)
                    usage = _completion_json(request_id, created, self.name,
                                             [item[1]])["usage"]
                    yield event("", item[1].finish_reason, usage)
                    yield "data: [DONE]\n\n"
                    return
                piece = pieces.step(item[1], item[2], job.stops)
                if piece:
                    yield event(piece)
                item = await job.queue.get()

        return events()

    async def _embeddings(self, method, raw):
        if method != "POST":
            raise _BadRequest("/v1/embeddings takes POST")
        body = _parse(raw)
        value = _required(body, "input", _EMBEDDING_FIELDS)
        if isinstance(value, str) or _strings(value):
            if self.model.tokenizer is None:
                raise _BadRequest("this model has no tokenizer: 'input' "
                                  "must be token ids (a list of ints or a "
                                  "list of such lists)")
            texts = [value] if isinstance(value, str) else value
            rows = [e.ids for e in self.model.tokenizer.encode_batch(texts)]
        elif _token_rows(value):
            rows = value
        elif _token_rows([value]):
            rows = [value]
        else:
            raise _BadRequest("'input' must be a str, a list of str, a list "
                              "of token ids or a list of such lists")
        pooling = _field(body, "pooling", (str,), "mean",
                         lambda v: v in ("mean", "first", "none"),
                         "\"mean\", \"first\" or \"none\"")
        info = {i.name: i for i in self.model.inputs}
        width = info["input_ids"].shape[1]
        for i, row in enumerate(rows):
            if width is not None and len(row) > width:
                raise _BadRequest("input %d is %d tokens; the model takes at "
                                  "most %d" % (i, len(row), width))
            if (width is not None and len(row) < width
                    and "attention_mask" not in info):
                raise _BadRequest("input %d is %d tokens; the model has no "
                                  "attention_mask, so it takes exactly %d"
                                  % (i, len(row), width))
        answers = await asyncio.gather(*(self._embed_batch(row)
                                         for row in rows))
        data = []
        for i, vectors in enumerate(answers):
            if isinstance(vectors, Exception):
                raise vectors
            embedding = (vectors.mean(axis=0) if pooling == "mean"
                         else vectors[0] if pooling == "first" else vectors)
            data.append({"object": "embedding", "index": i,
                         "embedding": embedding.tolist()})
        tokens = sum(len(row) for row in rows)
        return {"object": "list", "data": data, "model": self.name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _embed_rows(self, rows):
        """Each row's hidden states [its length, hidden], the rows run in
        batches of the compiled rows, padded (masked) to the width."""
        info = {i.name: i for i in self.model.inputs}
        batch, width = info["input_ids"].shape
        out = []
        step = batch or len(rows)
        for first in range(0, len(rows), step):
            chunk = rows[first:first + step]
            cols = width or max(map(len, chunk))
            ids = np.zeros((batch or len(chunk), cols), np.int64)
            mask = np.zeros_like(ids)
            for b, row in enumerate(chunk):
                ids[b, :len(row)] = row
                mask[b, :len(row)] = 1
            feed = {"input_ids": ids}
            if "attention_mask" in info:
                feed["attention_mask"] = mask
            if "token_type_ids" in info:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self.model.run(**feed)[self._output]
            out += [hidden[b, :len(row)].copy()
                    for b, row in enumerate(chunk)]
        return out

    async def _embed_batch_impl(self, rows):
        try:
            return await asyncio.to_thread(self._embed_rows, rows)
        except AttncError as e:
            if len(rows) == 1:
                return [e]
        # One row's error (e.g. a token id out of the vocabulary) is its
        # request's own: run them one by one.
        out = []
        for row in rows:
            try:
                out += await asyncio.to_thread(self._embed_rows, [row])
            except AttncError as e:
                out.append(e)
        return out


def _wants_stream(raw):
    """Whether a completion's body asks for a stream (the replica checks
    the rest)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


class _Ingress:
    """The HTTP side: forwards each request to a model replica (Ray Serve
    picks one) and answers with what it returns. A request whose replica
    stops while it runs (a crash, a killed process, a lost node) is sent
    again, up to `retries` times, to a replica that is up (completions
    with a seed or greedy give the same text again); after that, or for a
    stream that has begun, the client gets a 503 or an error event that
    says so."""

    def __init__(self, server, retries=1):
        self.server = server
        self.retries = retries

    async def __call__(self, request):
        _, JSONResponse, StreamingResponse = _serve()
        from ray.exceptions import ActorUnavailableError, RayActorError
        lost = (RayActorError, ActorUnavailableError)
        raw = await request.body()
        path = request.url.path
        streamed = (request.method == "POST" and path.rstrip("/").endswith(
            "/v1/completions") and _wants_stream(raw))
        failure = None
        for attempt in range(1 + self.retries):
            headers = {"x-attnc-attempts": str(attempt + 1)}
            try:
                if not streamed:
                    status, payload = await self.server.answer.remote(
                        request.method, path, raw)
                    return JSONResponse(payload, status_code=status,
                                        headers=headers)
                events = self.server.options(stream=True).stream.remote(raw)
                status, payload = await events.__anext__()
                if status != 200:
                    return JSONResponse(payload, status_code=status,
                                        headers=headers)
                return StreamingResponse(self._relay(events, lost),
                                         media_type="text/event-stream",
                                         headers=headers)
            except lost as e:
                failure = e
            except Exception as e:  # a fault of the server, not the client
                return JSONResponse(_error("%s: %s" % (type(e).__name__, e),
                                           "server_error"), status_code=500,
                                    headers=headers)
        return JSONResponse(_error(
            "the model replica answering this request stopped (%s) %s; "
            "Ray Serve replaces stopped replicas: send it again"
            % (type(failure).__name__, "on each of its %d tries"
               % (1 + self.retries) if self.retries else "on its only try"),
            "replica_unavailable"), status_code=503,
            headers={"x-attnc-attempts": str(1 + self.retries)})

    @staticmethod
    async def _relay(events, lost):
        try:
            async for event in events:
                yield event
        except lost as e:
            yield "data: %s\n\n" % json.dumps(_error(
                "the model replica streaming this completion stopped (%s); "
                "the text so far is incomplete" % type(e).__name__,
                "replica_unavailable"))


_CLASSES = None


def _classes():
    """The deployments' classes, _Server with Ray Serve's batching on its
    batch methods (made once, when Ray is first needed)."""
    global _CLASSES
    if _CLASSES is None:
        serve = _serve()[0]

        class AttncServer(_Server):
            __doc__ = _Server.__doc__

            @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.01)
            async def _complete_batch(self, completions):
                return await self._complete_batch_impl(completions)

            @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.01)
            async def _embed_batch(self, rows):
                return await self._embed_batch_impl(rows)

        class AttncHTTP(_Ingress):
            __doc__ = _Ingress.__doc__

        _CLASSES = AttncServer, AttncHTTP
    return _CLASSES


def deployment(library, *, weights=None, tokenizer=None, name=None,
               num_replicas=1, max_batch_size=None, batch_wait_timeout_s=0.01,
               max_tokens_limit=None, max_ongoing_requests=32,
               ray_actor_options=None, retries=1, http_replicas=1,
               prefill=None, pad_budget=0, **options):
    """A Ray Serve application serving the compiled model `library` (as
    `attnc.load(library, weights, tokenizer)` opens it on each replica; the
    paths must exist where the replicas run): pass it to `serve.run`.

    `num_replicas` replicas each load the model; `max_batch_size` requests
    (default: the model's compiled rows) that arrive within
    `batch_wait_timeout_s` of each other are batched; `max_tokens_limit`
    caps a completion's max_tokens (default: what the compiled sequence
    holds). `ray_actor_options` (default {"num_cpus": 1}; {"num_gpus": 1}
    for one replica per GPU) and other keyword options go to the model's
    `serve.deployment`. In front of the model, `http_replicas` light
    replicas (no CPU reserved) take HTTP and send a request again, up to
    `retries` times, when its model replica stops while answering. `name`
    is the model's name in answers and in the deployments' names
    (default: the library's file name).

    A decoder compiled as a KV-cache step serves greedy completions from
    its session's slots (continuous batching, see the module's
    docstring); `prefill`, a one-row build of the same checkpoint
    (input_shape={"input_ids": (1, None)}, the same kv_cache,
    logits="last"; CPU), then runs each new prompt alone over its slot's
    cache rows, except those within `pad_budget` (slots x prompt tokens <=
    pad_budget), which are padded into the step's run."""
    serve = _serve()[0]
    server, http = _classes()
    label = name or os.path.splitext(os.path.basename(str(library)))[0]
    model = serve.deployment(
        server, name="attnc-" + label, num_replicas=num_replicas,
        max_ongoing_requests=max_ongoing_requests,
        ray_actor_options=ray_actor_options or {"num_cpus": 1}, **options)
    front = serve.deployment(
        http, name="attnc-%s-http" % label, num_replicas=http_replicas,
        max_ongoing_requests=1000, ray_actor_options={"num_cpus": 0})
    return front.bind(
        model.bind(str(library),
                   None if weights is None else str(weights),
                   None if tokenizer is None else str(tokenizer), name,
                   max_batch_size, batch_wait_timeout_s, max_tokens_limit,
                   None if prefill is None else str(prefill), pad_budget),
        retries)
