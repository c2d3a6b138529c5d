#!/usr/bin/env python3
"""Serving demo and check (attnc.serve on Ray Serve, loopback only).

Compiles the tiny GPT-2 (with its tokenizer) and BERT test checkpoints,
starts a one-node Ray cluster on 127.0.0.1, deploys two replicas of GPT-2
and one of BERT, and sends a bounded number of concurrent requests: every
answer is checked against the model run directly in this process (attnc,
whose greedy GPT-2 texts are first checked against transformers'). Then,
as asked:

  --load N     N concurrent completions at once: none lost, all correct

(and always: short requests sent while long ones run at a one-replica
deployment finish while the long ones go on, the replica's slots taking
them between decode steps)
  --faults     malformed requests get 4xx and the replicas stay up; a
               replica killed mid-run is restarted by Ray Serve, its
               in-flight requests fail with an error (and are retried) or
               succeed, none hangs
  --bench N    N completions (concurrency 8) at a one-replica deployment:
               requests/s and tokens/s, beside the model run directly

Every request has a timeout, the whole run a limit (--limit-s); the cluster
is shut down at the end.

    serve_demo.py --src ATTNC_SRC --bin BUILD_BIN --workdir DIR [options]
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

TIMEOUT_S = 120  # one request, at most


def log(*args):
    print(*args, flush=True)


def post(url, body, timeout=TIMEOUT_S, raw=None, attempts=None):
    """(status, JSON answer) of a POST; a connection failure is status 0
    with the error's text. `attempts`, a list, gets the times the server
    sent it to a model replica."""
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            if attempts is not None:
                attempts.append(int(r.headers.get("x-attnc-attempts", 1)))
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, {"error": {"message": text}}
    except (OSError, urllib.error.URLError) as e:
        return 0, {"error": {"message": "%s: %s" % (type(e).__name__, e)}}


def stream(url, body, timeout=TIMEOUT_S):
    """The text pieces and the last event (finish reason, usage) of a
    streamed completion."""
    request = urllib.request.Request(
        url, data=json.dumps(dict(body, stream=True)).encode(),
        headers={"Content-Type": "application/json"})
    pieces, last, done = [], None, False
    with urllib.request.urlopen(request, timeout=timeout) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream"), \
            r.headers["Content-Type"]
        for line in r:
            line = line.decode().rstrip("\n")
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                done = True
                break
            event = json.loads(line[6:])
            choice = event["choices"][0]
            if choice["finish_reason"] is None:
                pieces.append(choice["text"])
            else:
                last = event
    assert done and last is not None, (done, last)
    return pieces, last


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reference:
    """The models run directly, in this process."""

    def __init__(self, attnc, gpt2_lib, gpt2_dir, bert_lib, bert_weights):
        self.gpt2 = attnc.load(gpt2_lib,
                               weights=os.path.join(gpt2_dir,
                                                    "model.safetensors"),
                               tokenizer=gpt2_dir)
        self.bert = attnc.load(bert_lib, weights=bert_weights)
        self.gpt2_lib = gpt2_lib
        self.gpt2_weights = os.path.join(gpt2_dir, "model.safetensors")

    def completion(self, body):
        prompts = body["prompt"]
        options = {k: body[k] for k in ("temperature", "top_p", "top_k",
                                        "seed", "stop") if k in body}
        return self.gpt2.generate_text_details(prompts,
                                               body.get("max_tokens", 16),
                                               **options)

    def embedding(self, row):
        batch, width = self.bert.inputs[0].shape
        ids = np.zeros((batch, width), np.int64)
        mask = np.zeros_like(ids)
        ids[0, :len(row)] = row
        mask[0, :len(row)] = 1
        hidden = self.bert.run(input_ids=ids, attention_mask=mask)
        return hidden["last_hidden_state"][0, :len(row)].mean(axis=0)


def check_completion(ref, body, status, answer):
    """'' when the answer is the direct run's, else what differs."""
    if status != 200:
        return "status %d: %s" % (status, answer)
    want = ref.completion(body)
    got = answer["choices"]
    if [c["text"] for c in got] != [r.text for r in want]:
        return "texts %r, direct %r" % ([c["text"] for c in got],
                                        [r.text for r in want])
    if [c["finish_reason"] for c in got] != [r.finish_reason for r in want]:
        return "finish reasons differ"
    usage = answer["usage"]
    if (usage["prompt_tokens"] != sum(r.prompt_tokens for r in want)
            or usage["completion_tokens"] != sum(r.completion_tokens
                                                 for r in want)
            or usage["total_tokens"] != usage["prompt_tokens"] +
            usage["completion_tokens"]):
        return "usage %s differs" % usage
    return ""


WORDS = ["the", "quick", "brown", "fox", "lazy", "dog", "jumps", "over",
         "a", "cat", "sat", "on", "mat", "hello", "world"]


def completion_body(i, max_tokens=12):
    """The i-th request of a mix: greedy, sampled (a seed of its own), with
    stop strings, and a list of two prompts."""
    rng = np.random.default_rng(i)
    prompt = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 8))))
    body = {"prompt": prompt, "max_tokens": max_tokens}
    kind = i % 4
    if kind == 1:
        body.update(temperature=0.8, top_p=0.9, top_k=40, seed=1000 + i)
    elif kind == 2:
        body.update(stop=["or", "\n"])
    elif kind == 3:
        body["prompt"] = [prompt, " ".join(rng.choice(WORDS, size=3))]
    return body


def run_concurrently(jobs, workers):
    """Each job's result, all started at once (at most `workers` in
    flight), each bounded by its request's timeout."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [f.result(timeout=TIMEOUT_S * 4) for f in futures]


def replicas(app):
    """The names of the live model replica actors of an application."""
    import ray
    return sorted(a["name"] for a in ray.util.list_named_actors(
        all_namespaces=True) if a["name"].startswith(
            "SERVE_REPLICA::%s#attnc-%s#" % (app, app)))


def running(serve, app):
    """The running model replicas of an application per serve.status()."""
    status = serve.status().applications.get(app)
    if status is None:
        return 0
    return status.deployments["attnc-" + app].replica_states.get(
        "RUNNING", 0)


def wait_for(what, predicate, limit_s=180):
    began = time.time()
    while not predicate():
        if time.time() - began > limit_s:
            raise SystemExit("FAIL: %s within %d s" % (what, limit_s))
        time.sleep(0.5)
    return time.time() - began


def main():
    parser = argparse.ArgumentParser()
    for option in ("--src", "--bin", "--workdir"):
        parser.add_argument(option, required=True)
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--load", type=int, default=0)
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--bench", type=int, default=0)
    parser.add_argument("--limit-s", type=int, default=600,
                        help="the whole run's limit: past it, the cluster "
                        "is shut down and the run fails")
    args = parser.parse_args()

    def overrun(signum, frame):
        raise TimeoutError("the demo ran past its %d s limit" % args.limit_s)
    signal.signal(signal.SIGALRM, overrun)
    signal.alarm(args.limit_s)
    sys.path.insert(0, os.path.join(args.src, "python"))
    os.environ["ATTNC_BIN_DIR"] = args.bin
    import attnc
    try:
        import attnc.serve as attnc_serve
        attnc_serve._serve()
    except attnc.AttncError as e:
        raise SystemExit("error: %s" % e)
    import ray
    from ray import serve

    os.makedirs(args.workdir, exist_ok=True)
    inputs = os.path.join(args.src, "test", "Frontend", "HF", "Inputs")
    gpt2_dir = os.path.join(inputs, "gpt2")
    bert_weights = os.path.join(inputs, "bert", "model.safetensors")
    # GPT-2 as a KV-cache step, 4 rows of up to 64 positions; BERT at 4
    # rows of 16 tokens with an attention mask (shorter inputs padded).
    gpt2_lib = attnc.compile(gpt2_dir, os.path.join(args.workdir,
                                                    "libgpt2.so"),
                             input_shape={"input_ids": (4, None)},
                             kv_cache=64)
    bert_lib = attnc.compile(os.path.join(inputs, "bert"),
                             os.path.join(args.workdir, "libbert.so"),
                             input_shape={"input_ids": (4, 16),
                                          "attention_mask": (4, 16)})
    t5_dir = os.path.join(inputs, "t5_gated")
    t5_lib = attnc.compile(t5_dir, os.path.join(args.workdir, "libt5.so"),
                           input_shape={"input_ids": (2, 10),
                                        "attention_mask": (2, 10),
                                        "decoder_input_ids": (2, 17)})
    t5 = attnc.load(t5_lib, weights=os.path.join(t5_dir,
                                                 "model.safetensors"),
                    tokenizer=t5_dir)
    with open(os.path.join(t5_dir, "text_expected.json")) as f:
        t5_want = json.load(f)
    ref = Reference(attnc, gpt2_lib, gpt2_dir, bert_lib, bert_weights)
    with open(os.path.join(gpt2_dir, "text_expected.json")) as f:
        want = json.load(f)
    assert ref.gpt2.generate_text(want["prompts"], want["max_new_tokens"]) \
        == want["greedy"]
    log("direct: gpt2 greedy texts equal transformers'")

    port = free_port()
    # A short temporary directory: Ray's sockets live there.
    ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    # Two logical CPUs: the replicas reserve 0.5 (GPT-2, two) and 0.25
    # (BERT, T5, the one without retries, the benchmark's) of them, so that
    # all fit at once.
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=ray_tmp,
             _node_ip_address="127.0.0.1", log_to_driver=False,
             runtime_env={"env_vars": {
                 "PYTHONPATH": os.path.join(args.src, "python")}})
    failures = []
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        began = time.time()
        serve.run(attnc_serve.deployment(
            gpt2_lib, weights=os.path.join(gpt2_dir, "model.safetensors"),
            tokenizer=gpt2_dir, name="gpt2", num_replicas=2,
            ray_actor_options={"num_cpus": 0.5}),
            name="gpt2", route_prefix="/gpt2")
        serve.run(attnc_serve.deployment(
            bert_lib, weights=bert_weights, name="bert", num_replicas=1,
            ray_actor_options={"num_cpus": 0.25}),
            name="bert", route_prefix="/bert")
        serve.run(attnc_serve.deployment(
            t5_lib, weights=os.path.join(t5_dir, "model.safetensors"),
            tokenizer=t5_dir, name="t5", num_replicas=1,
            ray_actor_options={"num_cpus": 0.25}),
            name="t5", route_prefix="/t5")
        log("deployed: gpt2 (2 replicas), bert (1 replica), t5 (1 replica) "
            "in %.0f s" % (time.time() - began))
        base = "http://127.0.0.1:%d" % port
        complete = base + "/gpt2/v1/completions"

        # The demo: a bounded mix of concurrent requests.
        bodies = [completion_body(i) for i in range(args.requests)]
        answers = run_concurrently(
            [lambda b=b: post(complete, b) for b in bodies], 16)
        bad = [(b, check_completion(ref, b, *a))
               for b, a in zip(bodies, answers)]
        bad = [x for x in bad if x[1]]
        if bad:
            failures.append("demo completions: %d wrong, e.g. %s"
                            % (len(bad), bad[0]))
        else:
            log("completions: %d concurrent requests, every answer equals "
                "the direct run" % len(bodies))
        for i in range(4):
            body = completion_body(i * 4 + (i % 3), max_tokens=16)
            body["prompt"] = body["prompt"] if isinstance(
                body["prompt"], str) else body["prompt"][0]
            pieces, last = stream(complete, body)
            direct = ref.completion(body)[0]
            if ("".join(pieces) != direct.text or
                    last["choices"][0]["finish_reason"] !=
                    direct.finish_reason or
                    last["usage"]["completion_tokens"] !=
                    direct.completion_tokens):
                failures.append("stream %r: %r %s, direct %r" % (
                    body, pieces, last, direct))
        log("streaming: 4 completions as server-sent events, the pieces "
            "joined equal the direct run")
        # An encoder-decoder: T5's texts equal transformers' and the direct
        # run's, streamed or not.
        t5_url = base + "/t5/v1/completions"
        bodies = [{"prompt": p, "max_tokens": t5_want["max_new_tokens"]}
                  for p in t5_want["prompts"]]
        answers = run_concurrently(
            [lambda b=b: post(t5_url, b) for b in bodies], 4)
        for body, (status, answer), text in zip(bodies, answers,
                                                t5_want["greedy"]):
            direct, = t5.generate_text_details(
                [body["prompt"]], body["max_tokens"])
            got = answer["choices"][0]["text"] if status == 200 else answer
            pieces, last = stream(t5_url, body)
            if got != text or direct.text != text or \
                    "".join(pieces) != text:
                failures.append("t5 %r: %r, streamed %r, direct %r, "
                                "transformers' %r" % (body, got, pieces,
                                                      direct.text, text))
        log("t5: %d completions, streamed and not, equal the direct run and "
            "transformers'" % len(bodies))
        rows = [[int(t) for t in np.random.default_rng(i).integers(
            1, 99, size=int(2 + i % 14))] for i in range(12)]
        answers = run_concurrently(
            [lambda r=r: post(base + "/bert/v1/embeddings", {"input": r})
             for r in rows], 12)
        worst = 0.0
        for row, (status, answer) in zip(rows, answers):
            if status != 200:
                failures.append("embedding: %d %s" % (status, answer))
                continue
            got = np.array(answer["data"][0]["embedding"])
            direct = ref.embedding(row)
            worst = max(worst, float(np.abs(got - direct).max()))
        if worst > 1e-5:
            failures.append("embeddings differ by %.1e" % worst)
        log("embeddings: 12 concurrent requests, max abs diff to the direct "
            "run %s 1e-5" % ("<=" if worst <= 1e-5 else ">"))

        if args.load:
            bodies = [completion_body(i) for i in range(args.load)]
            began = time.time()
            answers = run_concurrently(
                [lambda b=b: post(complete, b) for b in bodies], args.load)
            took = time.time() - began
            lost = sum(1 for s, _ in answers if s != 200)
            wrong = sum(1 for b, a in zip(bodies, answers)
                        if a[0] == 200 and check_completion(ref, b, *a))
            if lost or wrong:
                failures.append("load: %d failed, %d wrong of %d: %s" % (
                    lost, wrong, len(bodies), next(
                        (a for a in answers if a[0] != 200), "")))
            log("load: %d concurrent requests, %d failed, %d wrong "
                "(%.1f s)" % (len(bodies), lost, wrong, took))

        failures += mixed_lengths(attnc, attnc_serve, serve, base, ref,
                                  args.workdir)

        if args.faults:
            failures += faults(serve, base, complete, ref)

        if args.bench:
            bench(attnc_serve, serve, base, gpt2_lib, gpt2_dir, ref,
                  args.bench)
    finally:
        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            shutil.rmtree(ray_tmp, ignore_errors=True)
    for failure in failures:
        log("FAIL:", failure)
    if failures:
        raise SystemExit(1)
    log("PASS")


def mixed_lengths(attnc, attnc_serve, serve, base, ref, workdir):
    """Requests of very different max_tokens at one replica's 4 slots: 3
    long ones (56 tokens) and short ones (2 tokens) sent by three clients
    one after another while they run. The short ones take the free slot and finish while the
    long ones go on (the answers' attnc_schedule: the replica's decode
    steps of each prompt's first and last token). A one-row build feeds
    new prompts, those of at most 4 tokens padded into the step's run
    (pad_budget 16)."""
    failures = []
    gpt2_dir = os.path.dirname(ref.gpt2_weights)
    one_row = attnc.compile(gpt2_dir, os.path.join(workdir, "libgpt2_1.so"),
                            input_shape={"input_ids": (1, None)},
                            kv_cache=64, logits="last")
    serve.run(attnc_serve.deployment(
        ref.gpt2_lib, weights=ref.gpt2_weights, tokenizer=gpt2_dir,
        name="mixed", num_replicas=1, prefill=one_row, pad_budget=16,
        ray_actor_options={"num_cpus": 0.25}), name="mixed",
        route_prefix="/mixed")
    url = base + "/mixed/v1/completions"
    longs = [{"prompt": p, "max_tokens": 56}
             for p in ("the", "hello world", "a cat sat")]
    for body in longs:  # no eos before 56 tokens
        assert ref.completion(body)[0].completion_tokens == 56, body
    words = ["the lazy dog", "hello", "over the mat the quick brown fox",
             "a cat", "jumps over the lazy dog on a mat"]
    overlapped, shorts_sent, wrong = 0, 0, []
    for round_ in range(5):  # until short ones ran beside long ones
        shorts = []

        def send_shorts(first):
            # Three senders, one request at a time each, while the long
            # ones run (at most 60 in all).
            for i in range(first, 60, 3):
                if all(f.done() for f in long_futures):
                    break
                body = {"prompt": words[i % len(words)], "max_tokens": 2}
                shorts.append((body, post(url, body)))
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            long_futures = [pool.submit(post, url, b) for b in longs]
            senders = [pool.submit(send_shorts, i) for i in range(3)]
            long_answers = [f.result(timeout=TIMEOUT_S)
                            for f in long_futures]
            for f in senders:
                f.result(timeout=TIMEOUT_S)
        shorts_sent += len(shorts)
        answers = list(zip(longs, long_answers)) + shorts
        for body, (status, answer) in answers:
            problem = check_completion(ref, body, status, answer)
            if not problem:
                sched, = answer["attnc_schedule"]
                tokens = answer["usage"]["completion_tokens"]
                if sched["last_step"] - sched["first_step"] + 1 != tokens:
                    problem = "its %d tokens took steps %s" % (tokens, sched)
            if problem:
                wrong.append((body, problem))
        if wrong:
            break
        spans = [a["attnc_schedule"][0] for _, (_, a) in
                 zip(longs, long_answers)]
        overlapped += sum(1 for _, (_, a) in shorts if any(
            long["first_step"] < a["attnc_schedule"][0]["first_step"] and
            a["attnc_schedule"][0]["last_step"] < long["last_step"]
            for long in spans))
        if overlapped:
            break
    if wrong:
        failures.append("mixed lengths: %d wrong, e.g. %s"
                        % (len(wrong), wrong[0]))
    if not overlapped:
        failures.append("mixed lengths: no short request finished while a "
                        "long one ran (%d rounds)" % (round_ + 1))
    log("mixed lengths: %s short requests (2 tokens) finished while long "
        "ones (56 tokens) ran, every request's tokens in consecutive steps, "
        "every answer equals the direct run"
        % ("some" if overlapped and not wrong else "NO"))
    log("mixed lengths: %d of %d short requests ran beside the long ones "
        "(%d rounds)" % (overlapped, shorts_sent, round_ + 1))
    serve.delete("mixed")
    return failures


def faults(serve, base, complete, ref):
    failures = []
    before = replicas("gpt2")
    cases = [
        ("bad JSON", None, b"{\"prompt\": \"the\", max_tokens: 3"),
        ("a list body", [1, 2], None),
        ("no prompt", {"max_tokens": 3}, None),
        ("an unknown field", {"prompt": "the", "max_token": 3}, None),
        ("too many tokens", {"prompt": "the", "max_tokens": 100000}, None),
        ("a prompt too long",
         {"prompt": " ".join(["the quick brown fox"] * 20),
          "max_tokens": 20}, None),
        ("a bad type", {"prompt": "the", "temperature": "hot"}, None),
        ("stream with two prompts",
         {"prompt": ["a", "b"], "stream": True}, None),
    ]
    for what, body, raw in cases:
        status, answer = post(complete, body, timeout=30, raw=raw)
        message = answer.get("error", {}).get("message", "")
        if not 400 <= status < 500 or not message:
            failures.append("%s: status %d %s" % (what, status, answer))
        log("malformed, %s: %d %s" % (what, status, message))
    status, answer = post(base + "/bert/v1/embeddings", {"input": [1, 500]},
                          timeout=30)
    log("malformed, a token id out of the vocabulary: %d %s"
        % (status, answer.get("error", {}).get("message", "")))
    if status != 400:
        failures.append("embedding out of vocabulary: %d %s"
                        % (status, answer))
    # A bad request in a batch with good ones fails alone: a T5 prompt
    # longer than its encoder (found while generating) and an embedding
    # with a token id outside the vocabulary (found while running), sent
    # at once with good ones.
    t5_url = base + "/t5/v1/completions"
    t5_bodies = [{"prompt": p, "max_tokens": 8} for p in
                 ("thanks", "the quick brown fox jumps over", "hello",
                  "the house")]
    t5_answers = run_concurrently(
        [lambda b=b: post(t5_url, b) for b in t5_bodies], 4)
    rows = [[5, 6, 7], [8, 9, 10, 11], [1, 999], [12, 13]]
    bert_answers = run_concurrently(
        [lambda r=r: post(base + "/bert/v1/embeddings", {"input": r})
         for r in rows], 4)
    bad = [(t5_bodies[1], t5_answers[1]), (rows[2], bert_answers[2])]
    good = t5_answers[:1] + t5_answers[2:] + bert_answers[:2] + \
        bert_answers[3:]
    for what, (status, answer) in bad:
        log("malformed, batched with good ones: %d %s" % (
            status, answer.get("error", {}).get("message", "")))
    if any(status != 400 for _, (status, _) in bad) or \
            any(status != 200 for status, _ in good):
        failures.append("batched with good ones: %s %s" % (t5_answers,
                                                           bert_answers))
    else:
        log("malformed, batched with good ones: the good ones answered")
    body = {"prompt": "the lazy dog", "max_tokens": 5}
    status, answer = post(complete, body)
    if check_completion(ref, body, status, answer) or \
            replicas("gpt2") != before:
        failures.append("after malformed requests: %d %s, replicas %s -> %s"
                        % (status, answer, before, replicas("gpt2")))
    else:
        log("after malformed requests: the same %d replicas answer "
            "correctly" % len(before))

    # A replica killed while requests are in flight: 360 requests, 24 at a
    # time, the kill when 30 have been answered.
    import ray
    bodies = [completion_body(i, max_tokens=40) for i in range(360)]
    for b in bodies:  # short enough for 40 new tokens
        b["prompt"] = (b["prompt"][:30] if isinstance(b["prompt"], str)
                       else [p[:30] for p in b["prompt"]])
    victim = before[0]
    attempts, answered_at = [], []

    def timed(body):
        answer = post(complete, body, 60, None, attempts)
        answered_at.append(time.time())
        return answer
    with concurrent.futures.ThreadPoolExecutor(24) as pool:
        futures = [pool.submit(timed, b) for b in bodies]
        wait_for("30 answers", lambda: sum(f.done() for f in futures) >= 30,
                 TIMEOUT_S)
        ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
        killed_at = time.time()
        answers = [f.result(timeout=TIMEOUT_S) for f in futures]
    # The kill came mid-run: most requests were answered after it (which
    # of them were on the killed replica is Ray Serve's choice).
    after = sum(1 for t in answered_at if t > killed_at)
    first_failed = [(b, a) for b, a in zip(bodies, answers) if a[0] != 200]
    for b, a in first_failed[:3]:
        log("killed replica: a request failed: %d %s"
            % (a[0], a[1].get("error", {}).get("message", a[1])[:200]))
    # The failed ones again (a client's retry), at most 3 times each.
    retried = 0
    for attempt in range(3):
        again = []
        for b, a in first_failed:
            status, answer = post(complete, b, 60)
            if status != 200:
                again.append((b, (status, answer)))
            else:
                retried += 1
                answers[bodies.index(b)] = (status, answer)
        first_failed = again
        if not again:
            break
        time.sleep(2)
    wrong = sum(1 for b, a in zip(bodies, answers)
                if check_completion(ref, b, *a))
    resent = sum(1 for a in attempts if a > 1)
    log("killed replica: 360 requests, %d answered after the kill, %d sent "
        "again by the server, %d failed and succeeded on the client's retry, "
        "%d wrong or lost, none hung" % (after, resent, retried, wrong))
    if wrong:
        failures.append("killed replica: %d of 360 wrong or lost" % wrong)
    if after < 100:
        failures.append("killed replica: only %d answers after the kill"
                        % after)
    took = wait_for("gpt2 back at 2 running replicas", lambda: running(
        serve, "gpt2") == 2 and victim not in replicas("gpt2") and len(
            replicas("gpt2")) == 2)
    log("killed replica: Ray Serve restarted it (2 running replicas, a new "
        "one, %.0f s after the kill)" % (time.time() - killed_at))
    body = {"prompt": "hello world", "max_tokens": 8}
    answers = run_concurrently([lambda: post(complete, body)] * 8, 8)
    if any(check_completion(ref, body, *a) for a in answers):
        failures.append("after the restart: %s" % answers)
    else:
        log("after the restart: 8 requests answered correctly")
    del took
    return failures + no_retries(serve, base, ref)


def no_retries(serve, base, ref):
    """Without the server's retries, the requests in flight on a killed
    replica fail with a 503 that says why; none hangs, and the replica
    comes back."""
    import attnc.serve as attnc_serve
    import ray
    failures = []
    gpt2_dir = os.path.dirname(ref.gpt2_weights)
    serve.run(attnc_serve.deployment(
        ref.gpt2_lib, weights=ref.gpt2_weights, tokenizer=gpt2_dir,
        name="once", num_replicas=1, retries=0,
        ray_actor_options={"num_cpus": 0.25}), name="once",
        route_prefix="/once")
    url = base + "/once/v1/completions"
    victim = replicas("once")[0]
    # Enough requests (16 at a time) that the replica is still answering
    # some when it is killed: the tiny model answers one in milliseconds.
    REQUESTS = 96
    bodies = [{"prompt": "the", "max_tokens": 60, "seed": i,
               "temperature": 1.0} for i in range(REQUESTS)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(post, url, b, 60) for b in bodies]
        # Killed once the first answer is back: the replica runs sampled
        # requests one at a time, so the others are still on it (a fixed
        # delay let a fast replica answer all 16 before the kill).
        concurrent.futures.wait(futures, timeout=TIMEOUT_S,
                                return_when=concurrent.futures.FIRST_COMPLETED)
        ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
        answers = [f.result(timeout=TIMEOUT_S) for f in futures]
    failed = [a for a in answers if a[0] != 200]
    right = sum(1 for b, a in zip(bodies, answers)
                if a[0] == 200 and not check_completion(ref, b, *a))
    for status, answer in failed[:1]:
        log("no retries, killed replica: %d %s" % (
            status, answer.get("error", {}).get("message", answer)))
    if (not failed or any(a[0] != 503 for a in failed)
            or right + len(failed) != REQUESTS):
        failures.append("no retries: %s" % answers)
    log("no retries, killed replica: %d of %d requests failed with 503, "
        "the others correct, none hung" % (len(failed), REQUESTS))
    wait_for("the replica back", lambda: running(serve, "once") == 1 and
             victim not in replicas("once"))
    status, answer = post(url, bodies[0])
    if check_completion(ref, bodies[0], status, answer):
        failures.append("no retries, after the restart: %d %s"
                        % (status, answer))
    log("no retries: the replica is back and answers correctly")
    serve.delete("once")
    return failures


def bench(attnc_serve, serve, base, gpt2_lib, gpt2_dir, ref, count):
    """Throughput over HTTP of a one-replica deployment and of the
    two-replica one, beside the model run directly (one generate_text of 4
    prompts at a time); a streamed completion's time to its first piece."""
    serve.run(attnc_serve.deployment(
        gpt2_lib, weights=os.path.join(gpt2_dir, "model.safetensors"),
        tokenizer=gpt2_dir, name="bench", num_replicas=1,
        ray_actor_options={"num_cpus": 0.25}),
        name="bench", route_prefix="/bench")
    bodies = []
    for i in range(count):
        prompt = completion_body(i)["prompt"]
        prompt = prompt if isinstance(prompt, str) else prompt[0]
        bodies.append({"prompt": prompt[:40], "max_tokens": 32})
    for label, app in (("one replica", "bench"), ("two replicas", "gpt2")):
        url = base + "/%s/v1/completions" % app
        run_concurrently([lambda b=b: post(url, b) for b in bodies[:8]], 8)
        began = time.time()
        answers = run_concurrently([lambda b=b: post(url, b)
                                    for b in bodies], 8)
        took = time.time() - began
        ok = [a for s, a in answers if s == 200]
        tokens = sum(a["usage"]["completion_tokens"] for a in ok)
        log("bench: %s, %d requests (8 at a time, 32 new tokens each): "
            "%.1f requests/s, %.0f tokens/s, %d failed"
            % (label, count, len(ok) / took, tokens / took,
               count - len(ok)))
    began = time.time()
    tokens = 0
    for first in range(0, count, 4):
        results = ref.gpt2.generate_text_details(
            [b["prompt"] for b in bodies[first:first + 4]], 32)
        tokens += sum(r.completion_tokens for r in results)
    took = time.time() - began
    log("bench: direct, in-process, 4 prompts at a time: %.1f requests/s, "
        "%.0f tokens/s" % (count / took, tokens / took))
    url = base + "/bench/v1/completions"
    first_ms, total_ms = [], []
    for b in bodies[:8]:
        began = time.time()
        request = urllib.request.Request(
            url, data=json.dumps(dict(b, stream=True)).encode(),
            headers={"Content-Type": "application/json"})
        first = None
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as r:
            for line in r:
                if first is None and line.startswith(b"data: {"):
                    first = time.time()
        first_ms.append((first - began) * 1e3)
        total_ms.append((time.time() - began) * 1e3)
    log("bench: streamed, one at a time: first piece after %.0f ms, all 32 "
        "tokens after %.0f ms (medians)" % (float(np.median(first_ms)),
                                            float(np.median(total_ms))))
    serve.delete("bench")


if __name__ == "__main__":
    main()
