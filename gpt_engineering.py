"""The engineering under gpt.py that chapter 4 does not teach, explained in the appendix notebook.

- `get_tokenizer` (handed on as gpt.get_tokenizer): GPT-2's tokenizer built offline from the two
  BPE files in data/gpt2-bpe/, checked against the SHA-256 sums of OpenAI's originals at every
  load (the book's `tiktoken.get_encoding("gpt2")` downloads them).
- The checks at the boundaries where a learner's input enters, never inside a forward pass (the
  chapter's classes are the book's listings and check nothing): `check_config` for a config
  (gpt.gpt2_config, the bonus entry points), `check_num_tokens` for a length (the bonus KV caches
  and sampling loop), `check_generation_args` for the arguments of a generation loop (the command
  line, the bonus entry points).
- `config_of`: the config a `gpt.GPTModel` was built from, read off its modules.
"""

import hashlib
import json
from pathlib import Path

import tiktoken
import torch

# GPT-2's two BPE files ship with the course, with the SHA-256 sums of OpenAI's originals.
BPE_FILES = {
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
}
BPE_DIR = Path(__file__).parent / "data" / "gpt2-bpe"

# How GPT-2 cuts text into pieces before merging: contractions, letters, digits, other symbols,
# spaces; written as tiktoken writes it (r50k_pat_str), with possessive quantifiers for speed.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


def read_checked(path, sha256):
    """The bytes of `path`, after checking that they have the expected SHA-256 sum."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{path} is damaged or edited: its SHA-256 sum is not the official one")
    return data


def gpt2_bpe_ranks(vocab_bpe, encoder_json):
    """tiktoken's token ranks from GPT-2's two files, read as tiktoken's own loader reads them."""
    # The files spell every byte as a printable character: itself, or chr(256 + n) for the
    # n-th byte that is not printable.
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    others = [b for b in range(256) if b not in printable]
    byte_of = {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}
    ranks = {bytes([b]): rank for rank, b in enumerate(printable + others)}
    for first, second in (line.split() for line in vocab_bpe.decode().split("\n")[1:-1]):
        ranks[bytes(byte_of[c] for c in first + second)] = len(ranks)  # merges, in priority order
    encoder = json.loads(encoder_json)
    encoder.pop("<|endoftext|>")
    if ranks != {bytes(byte_of[c] for c in token): rank for token, rank in encoder.items()}:
        raise ValueError("vocab.bpe and encoder.json disagree")
    return ranks


def get_tokenizer(bpe_dir=BPE_DIR):
    """The GPT-2 tokenizer, built offline from the BPE files in `bpe_dir`.

    Their hashes are checked at every call, and nothing is cached or written anywhere.
    """
    files = {name: read_checked(Path(bpe_dir) / name, sha256) for name, sha256 in BPE_FILES.items()}
    return tiktoken.Encoding(
        name="gpt2",
        explicit_n_vocab=50257,
        pat_str=GPT2_PATTERN,
        mergeable_ranks=gpt2_bpe_ranks(files["vocab.bpe"], files["encoder.json"]),
        special_tokens={"<|endoftext|>": 50256},
    )


def check_config(cfg, reference):
    """A copy of `cfg`, once it has exactly the keys of `reference` (GPT_CONFIG_124M, say)."""
    if set(cfg) != set(reference):
        raise ValueError(f"config keys must be {sorted(reference)}; these differ: "
                         f"{sorted(set(cfg) ^ set(reference))}")
    return dict(cfg)


def config_of(model):
    """The config a gpt.GPTModel was built from, read off its modules.

    The book's class keeps none; a model that keeps its own as `model.cfg` (the bonus models)
    gives a copy of that."""
    if hasattr(model, "cfg"):
        return dict(model.cfg)
    attention = model.trf_blocks[0].att if len(model.trf_blocks) else None
    return {
        "vocab_size": model.tok_emb.num_embeddings,
        "context_length": model.pos_emb.num_embeddings,
        "emb_dim": model.tok_emb.embedding_dim,
        "n_heads": attention.num_heads if attention else None,  # no block: nothing to read
        "n_layers": len(model.trf_blocks),
        "drop_rate": model.drop_emb.p,
        "qkv_bias": attention is not None and attention.W_query.bias is not None,
    }


def check_num_tokens(num_tokens, context_length):
    """Refuse an input longer than the position embedding covers (a shape: no device sync)."""
    if num_tokens > context_length:
        raise ValueError(f"{num_tokens} tokens, but the model's context_length is "
                         f"{context_length}: pass at most the last {context_length}")


def check_generation_args(model, idx, max_new_tokens, context_size):
    """Refuse arguments that generate_text_simple would misuse silently or with an obscure error."""
    if not isinstance(idx, torch.Tensor) or idx.is_floating_point():
        raise TypeError(f"idx must be a tensor of integer token ids, got "
                        f"{idx.dtype if isinstance(idx, torch.Tensor) else type(idx).__name__}")
    if idx.dim() != 2:
        raise ValueError(f"idx must have shape (batch, num_tokens), got {tuple(idx.shape)} "
                         "(.unsqueeze(0) adds the batch dimension)")
    for name, value, least in (("max_new_tokens", max_new_tokens, 0),
                               ("context_size", context_size, 1)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}")
    vocab_size = config_of(model)["vocab_size"]
    if idx.numel() and (idx.min() < 0 or idx.max() >= vocab_size):
        raise ValueError(f"token ids must lie in [0, {vocab_size - 1}], the model's vocabulary; "
                         f"got ids from {idx.min().item()} to {idx.max().item()}")
