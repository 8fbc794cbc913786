"""Check on an NVIDIA GPU what the course claims there: one line per claim, PASS or FAIL.

    python -m tools.check_gpu                 # from the repository's folder, on a CUDA machine
    python -m tools.check_gpu --device cpu --quick   # the same checks on the CPU, smaller

CI has no GPU, so a maintainer runs this by hand on a machine with one (PyTorch's CUDA build and
requirements-dev.txt installed). Without CUDA it prints "no GPU" and exits 0; otherwise it exits
1 if a claim fails. It reuses the tests' models and tolerances (tests/chapter/test_compile.py,
tests/bonus/test_modern_hf.py), hence `python -m` from the repository's folder. The claims:

1. the chapter's seeded GPT-2 small gives the book's ids there, its logits close to the CPU's;
2. an id outside the vocabulary stops the model with a device-side assert (notebook 06), run in
   a process of its own, because the assert leaves the CUDA context unusable;
3. torch.compile with inductor compiles every model of tests/chapter/test_compile.py, same logits;
4. bonus/gpt2_to_llama_qwen/modern_hf.py's conversion of Hugging Face's bfloat16 Llama and Qwen3
   models matches their logits and greedy ids (tests/bonus/test_modern_hf.py's models, tolerances);
5. bonus/watch_it_learn/train.py trains notebook 07's model there, with the CPU's losses (dropout
   off, so both draw the same numbers) and the tokens per second of notebook 07's run;
6. greedy decoding: generate_fast, Hugging Face's generate and the chapter's loop give the same
   ids; their tokens per second, generate_fast the fastest.
"""

import argparse
import subprocess
import sys

import torch

import gpt
from bonus.gpt2_to_llama_qwen.modern_hf import model_from_hf
from bonus.kv_cache.benchmark import hf_generator, race
from bonus.kv_cache.kv_cache_fast import FastGPT, generate_fast
from bonus.watch_it_learn import train
from tests.helpers import BOOK_OUTPUT_IDS, HELLO_IDS

# Run by claim 2 in a fresh process: an id one past the vocabulary, looked up on `device`.
OUT_OF_VOCABULARY = """
import sys, torch, gpt
cfg = {**gpt.GPT_CONFIG_124M, "emb_dim": 64, "n_heads": 4, "n_layers": 1}
model = gpt.GPTModel(cfg).to(sys.argv[1])
logits = model(torch.tensor([[cfg["vocab_size"]]], device=sys.argv[1]))
print(logits.sum().item())  # reading a value waits for the device: the assert surfaces here
"""


def chapter_ids(device, quick):
    torch.manual_seed(123)
    model = gpt.GPTModel(gpt.GPT_CONFIG_124M).eval()
    idx = torch.tensor([HELLO_IDS])
    with torch.no_grad():
        on_cpu = model(idx)
        model.to(device)
        there = model(idx.to(device)).cpu()
    ids = gpt.generate_text_simple(model, idx.to(device), 6, 1024)[0].tolist()
    difference = (there - on_cpu).abs().max().item()
    return (ids == BOOK_OUTPUT_IDS and difference < 1e-4,
            f"the chapter's GPT-2 gives the book's ids on {device.type}: {ids == BOOK_OUTPUT_IDS}; "
            f"logits within {difference:.1e} of the CPU's (at most 1e-4)")


def device_side_assert(device, quick):
    run = subprocess.run([sys.executable, "-c", OUT_OF_VOCABULARY, device.type],
                         capture_output=True, text=True, timeout=300)
    expected = "device-side assert" if device.type == "cuda" else "index out of range"
    return (run.returncode != 0 and expected in run.stderr,
            f"an id outside the vocabulary stops the model with {expected!r}: "
            f"{expected in run.stderr}")


def inductor(device, quick):
    from tests.chapter.test_compile import MODELS, PROMPTS, build

    failed = []
    for name in MODELS:
        torch._dynamo.reset()
        model = build(name).to(device)
        compiled = torch.compile(model, fullgraph=True, backend="inductor")
        with torch.no_grad():
            expected, got = model(PROMPTS.to(device)), compiled(PROMPTS.to(device))
        tolerance = 1e-4 if expected.dtype == torch.float32 else 0.1
        if (got.float() - expected.float()).abs().max() > tolerance:
            failed.append(name)
    return (not failed, f"torch.compile(backend='inductor', fullgraph=True) gives each of the "
                        f"{len(MODELS)} models' logits; failed: {failed or 'none'}")


def bfloat16_parity(device, quick):
    from tests.bonus.test_modern_hf import COMMON, SHAPES, TOLERANCE, hf_model, in_dtype

    ids = torch.randint(0, COMMON["vocab_size"], (2, 40), generator=torch.Generator().manual_seed(1))
    ids, worst, same_ids = ids.to(device), 0.0, True
    for shape in SHAPES:
        for attention in TOLERANCE:  # sdpa, then eager, whose ids are compared
            theirs = in_dtype(hf_model(*SHAPES[shape]), torch.bfloat16, attention).to(device)
            ours = model_from_hf(theirs)
            with torch.no_grad():
                difference = (ours(ids) - theirs(ids).logits).abs().max().item()
            worst = max(worst, difference)
        expected = theirs.generate(ids[:, :5], max_new_tokens=12, do_sample=False, pad_token_id=0)
        same_ids &= torch.equal(gpt.generate_text_simple(ours, ids[:, :5], 12, 64), expected)
    limit = TOLERANCE["sdpa"][torch.bfloat16]
    return (worst <= limit and same_ids,
            f"bfloat16 Llama/Qwen3 converted from Hugging Face on {device.type}: logits within "
            f"{worst:.3f} (at most {limit}) in {len(SHAPES)} shapes, same greedy ids: {same_ids}")


def notebook_07_model(vocab_size, drop_rate):
    torch.manual_seed(123)
    return gpt.GPTModel({**gpt.GPT_CONFIG_124M, "vocab_size": vocab_size, "context_length": 64,
                         "emb_dim": 128, "n_heads": 4, "n_layers": 4, "drop_rate": drop_rate})


def training(device, quick):
    gpt2_ids = gpt.get_tokenizer().encode(train.load_text())
    vocab = train.Vocab(gpt2_ids)
    train_ids, val_ids = train.split(vocab.encode(gpt2_ids))
    losses = []
    for where in ("cpu", device):  # the batches stay on the CPU: train() moves them
        model = notebook_07_model(len(vocab), drop_rate=0.0).to(where)
        history = train.train(model, train_ids, val_ids, steps=20, eval_every=20)
        losses.append(history["train_loss"][-1])
    steps = 50 if quick else 300
    model = notebook_07_model(len(vocab), drop_rate=0.1).to(device)
    train.train(model, train_ids, val_ids, steps=10, eval_every=10)  # warm-up
    speed = train.train(model, train_ids, val_ids, steps=steps, eval_every=steps)[
        "tokens_per_second"]
    same = abs(losses[0] - losses[1]) < 0.01
    return (same, f"notebook 07's model trains on {device.type}: loss after 20 steps "
                  f"{losses[1]:.3f} (CPU {losses[0]:.3f}); {speed:,.0f} tokens/s over {steps} steps")


def decoding(device, quick):
    new_tokens = 20 if quick else 200
    torch.manual_seed(123)
    model = gpt.GPTModel(gpt.GPT_CONFIG_124M).eval().to(device)
    idx = torch.tensor([HELLO_IDS], device=device)
    fast, hf = FastGPT(model), hf_generator(model, idx)
    generators = {"generate_fast": lambda n: generate_fast(fast, idx, n, 1024),
                  "Hugging Face": hf,
                  "chapter's loop": lambda n: gpt.generate_text_simple(model, idx, n, 1024)}
    # .tolist() waits for the device, so each call is timed to its last token.
    race({name: lambda g=g: g(5).tolist() for name, g in generators.items()}, rounds=1)  # warm-up
    ids, seconds = race({name: lambda g=g: g(new_tokens).tolist()
                         for name, g in generators.items()}, rounds=3)
    speed = {name: new_tokens / s for name, s in seconds.items()}
    same = all(i == ids["generate_fast"] for i in ids.values())
    fastest = max(speed, key=speed.get) == "generate_fast"
    return (same and fastest, f"greedy decoding on {device.type}, {new_tokens} tokens, same ids: "
                              f"{same}; tokens/s (median of 3) " +
                              ", ".join(f"{name} {s:,.0f}" for name, s in speed.items()))


CLAIMS = [chapter_ids, device_side_assert, inductor, bfloat16_parity, training, decoding]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--quick", action="store_true", help="fewer tokens and training steps")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("no GPU: nothing checked (torch.cuda.is_available() is False)")
        return 0
    device = torch.device(args.device)
    if device.type == "cuda":
        print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}, "
              f"CUDA {torch.version.cuda}")
    held = 0
    for claim in CLAIMS:
        try:
            ok, text = claim(device, args.quick)
        except Exception as err:  # one broken claim must not hide the others
            ok, text = False, f"{claim.__name__} raised {type(err).__name__}: {err}".splitlines()[0]
        held += ok
        print(f"{'PASS' if ok else 'FAIL'}  {text}", flush=True)
    print(f"{held} of {len(CLAIMS)} claims hold")
    return 0 if held == len(CLAIMS) else 1


if __name__ == "__main__":
    sys.exit(main())
