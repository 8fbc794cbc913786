"""The command line of gpt.py: build an untrained GPT-2 and continue a prompt greedily.

    python gpt.py --help
    python gpt.py "Every effort moves you" --max-new-tokens 20

A plain, hand-written module: gpt.py's last lines call `main` from here. The appendix
notebook (notebooks/appendix_engineering.ipynb) explains it.
"""

import argparse
import codecs
import contextlib
import sys
import time

import torch

import gpt
from gpt_engineering import check_generation_args


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument prints a single line instead of usage + error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def whole_number(low, high):
    """An argparse type: a whole number from `low` to `high`, or a one-line error."""

    def parse(text):
        with contextlib.suppress(ValueError):  # not a number, or too many digits for int()
            value = int(text)
            if low <= value <= high:
                return value
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise argparse.ArgumentTypeError(
            f"must be a whole number from {low:,} to {high:,}, got {shown!r}")

    return parse


def model_summary(name):
    """What building GPT-2 size `name` means, known from its config before any weight exists."""
    params = sum(gpt.parameter_breakdown(gpt.gpt2_config(name)).values())
    return f"{name}: {params:,} parameters, {params * 4 / 1024**2:,.0f} MB in float32"


def generate_streaming(model, idx, max_new_tokens, context_size, tokenizer, out):
    """generate_text_simple for a batch of one, writing each new token's text to `out` at once."""
    check_generation_args(model, idx, max_new_tokens, context_size)  # once, before the loop
    # A character can span tokens; the decoder holds back its first bytes until it is complete.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for _ in range(max_new_tokens):
        idx = gpt.generate_text_simple(model, idx, 1, context_size)
        out.write(decoder.decode(tokenizer.decode_single_token_bytes(idx[0, -1].item())))
        out.flush()
    out.write(decoder.decode(b"", final=True))
    return idx


def main(argv=None):
    """Command line: build an untrained GPT-2 and continue a prompt greedily."""
    limit = gpt.GPT_CONFIG_124M["context_length"]  # the same for every GPT-2 size
    parser = OneLineParser(
        prog="gpt.py", allow_abbrev=False,  # "--max" must not silently mean --max-new-tokens
        description="Build GPT-2 with random weights, as at the end of chapter 4, and continue a "
        "prompt greedily. The result goes to stdout; progress and the text as it is generated "
        "go to stderr (add 2>/dev/null to hide them).",
        epilog='example: python gpt.py "Every effort moves you" --max-new-tokens 20',
    )
    parser.add_argument("prompt", nargs="?", default="Hello, I am",
                        help=f"text to continue, at most {limit} tokens (default: %(default)r)")
    parser.add_argument("--max-new-tokens", type=whole_number(0, 100_000), default=6, metavar="N",
                        help="how many tokens to generate, at most 100,000 (default: %(default)s);"
                        f" past {limit} tokens each step sees only the last {limit}")
    parser.add_argument("--seed", type=whole_number(0, 2**64 - 1), default=123,
                        help="torch.manual_seed before building (default: %(default)s)")
    parser.add_argument("--model", choices=list(gpt.GPT2_SIZES), default="gpt2-small",
                        help="GPT-2 size to build (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        tokenizer = gpt.get_tokenizer()
    except (OSError, ValueError) as err:  # a missing or damaged file in data/gpt2-bpe/
        sys.exit(f"gpt.py: cannot load the GPT-2 tokenizer: {err}")
    encoded = torch.tensor([tokenizer.encode(args.prompt, allowed_special={"<|endoftext|>"})])
    if not 0 < encoded.shape[1] <= limit:
        parser.error(f"the prompt must have 1 to {limit} tokens, it has {encoded.shape[1]}")

    print(f"Building {model_summary(args.model)} ...", end=" ", file=sys.stderr, flush=True)
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    model = gpt.GPTModel(gpt.gpt2_config(args.model)).eval()  # eval: no dropout
    print(f"done in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(args.prompt, end="", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        out = generate_streaming(model, encoded, args.max_new_tokens, limit, tokenizer, sys.stderr)
    except KeyboardInterrupt:  # Ctrl-C during a long run: stop without a traceback
        parser.exit(130, "\ninterrupted\n")
    print(f"\n({args.max_new_tokens} new tokens in {time.perf_counter() - start:.1f} s)",
          file=sys.stderr)
    print("Input ids: ", encoded[0].tolist())
    print("Output ids:", out[0].tolist())
    print("Output text:", gpt.token_ids_to_text(out, tokenizer))
