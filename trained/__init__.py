"""The chapter's GPTModel trained on Tiny Shakespeare: the weights in this folder, loaded after
checking their SHA-256 sum, without unpickling anything (safetensors).

    shakespeare = trained.load()
    ids = shakespeare.encode("ROMEO:")                   # a [1, num_tokens] tensor of its ids
    out = gpt.generate_text_simple(shakespeare.model, ids, 20, shakespeare.context_length)
    print(shakespeare.decode(out))

The model knows only the 11,706 GPT-2 tokens the play uses, renumbered 0, 1, 2, ...; `encode` and
`decode` translate. `python -m trained.train_shakespeare` made the file (README.md).
"""

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import safetensors.torch
import torch

import gpt
from gpt_engineering import read_checked

WEIGHTS = Path(__file__).resolve().parent / "shakespeare.safetensors"
WEIGHTS_SHA256 = "603cec9fc4c9b56a1b56708c5f0df35be91c703e4382ed55646b9e31934a6599"


@dataclass
class Trained:
    model: gpt.GPTModel  # in eval mode
    config: dict
    gpt2_ids: torch.Tensor  # the model's id i is GPT-2's token gpt2_ids[i]
    tokenizer: object

    @property
    def context_length(self):
        return self.config["context_length"]

    def encode(self, text):
        """`text` as a [1, num_tokens] tensor of the model's ids (a ValueError for a token the
        play never uses)."""
        gpt2 = torch.tensor(self.tokenizer.encode(text))
        known = torch.isin(gpt2, self.gpt2_ids)
        if not known.all():
            unknown = [self.tokenizer.decode([i]) for i in gpt2[~known].tolist()]
            raise ValueError(f"the play never uses the tokens {unknown}: the model has no id for them")
        return torch.searchsorted(self.gpt2_ids, gpt2).unsqueeze(0)

    def decode(self, ids):
        """The text of a tensor of the model's ids."""
        return self.tokenizer.decode(self.gpt2_ids[ids.flatten()].tolist())

    @functools.cached_property
    def pieces(self):
        """The text of each of the model's ids."""
        return [self.tokenizer.decode([i]) for i in self.gpt2_ids.tolist()]

    def speaker_tokens(self, ids):
        """For each of a 1-D tensor of the model's ids: whether it belongs to a line naming who
        speaks next, such as "GREMIO:" or "First Citizen:" (at most three words and a colon)."""
        pieces = [self.pieces[i] for i in ids.tolist()]
        flags, line = [], []
        for piece in pieces:
            line.append(piece)
            if "\n" in piece or len(flags) + len(line) == len(pieces):
                words = "".join(line).strip()
                flags += [words.endswith(":") and len(words.split()) <= 3] * len(line)
                line = []
        return torch.tensor(flags)


def load(path=WEIGHTS, sha256=None):
    """The trained model, from `path` after checking its SHA-256 sum: `sha256` if given, else
    the shipped sum for the shipped file, else the sum in the record `train_shakespeare` wrote
    beside it (NAME.json for NAME.safetensors)."""
    path = Path(path)
    data = read_checked(path, sha256 or _expected_sha256(path))
    tensors = safetensors.torch.load(data)
    gpt2_ids = tensors.pop("vocab.gpt2_ids")
    config = json.loads(_metadata(data)["config"])
    with torch.random.fork_rng(devices=[]):  # the caller's random numbers stay as they were
        model = gpt.GPTModel(config)  # random weights, overwritten next: 40 ms at this size
    model.load_state_dict(tensors)
    return Trained(model.eval(), config, gpt2_ids, gpt.get_tokenizer())


def _expected_sha256(path):
    """The SHA-256 sum the weights at `path` should have. The shipped file's is written here,
    so that editing its record too cannot pass; a retrained file's is in its record."""
    if path.resolve() == WEIGHTS:
        return WEIGHTS_SHA256
    return json.loads(path.with_suffix(".json").read_text())["sha256"]


def _metadata(data):
    """The string metadata of a safetensors file: its JSON header's __metadata__."""
    header_size = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + header_size])["__metadata__"]


def attention_weights(model, ids, windows_per_pass=32):
    """Every head's attention weights for `ids`, (batch, n_layers, n_heads, num_tokens, num_tokens):
    what each block's attention hands its dropout, caught with forward hooks (in eval mode dropout
    passes them on unchanged). The batch runs `windows_per_pass` rows at a time, so that the
    logits the model also computes stay small."""
    caught = []
    hooks = [block.att.dropout.register_forward_hook(lambda _, args, out: caught.append(out))
             for block in model.trf_blocks]
    try:
        with torch.no_grad():
            for rows in ids.split(windows_per_pass):
                model(rows)
    finally:
        for hook in hooks:
            hook.remove()
    n_layers = len(model.trf_blocks)  # caught: block 0, 1, ... of the first rows, then the next
    passes = [torch.stack(caught[i:i + n_layers], dim=1) for i in range(0, len(caught), n_layers)]
    return torch.cat(passes)
