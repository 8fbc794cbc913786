"""Unit tests for gpt.py: each component against a reference, then the whole model."""

import json
import shutil
import socket
import tempfile

import pytest
import tiktoken
import torch
import torch.nn.functional as F
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
from tiktoken_ext.openai_public import r50k_pat_str

import gpt
import gpt_engineering
from gpt_engineering import BPE_DIR
from tests.helpers import BOOK_OUTPUT_IDS, BOOK_OUTPUT_TEXT, HELLO_IDS

# ---- tokenizer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ids",
    [
        ("Every effort moves you", [6109, 3626, 6100, 345]),
        ("Every day holds a", [6109, 1110, 6622, 257]),
        ("Hello, I am", HELLO_IDS),
        ("<|endoftext|>", [50256]),
    ],
)
def test_tokenizer_gives_standard_gpt2_ids(tokenizer, text, ids):
    assert gpt.text_to_token_ids(text, tokenizer).tolist() == [ids]
    assert tokenizer.decode(ids) == text


def swap_two_ids(encoder_json):
    """encoder.json's bytes, the ids of " effort" and " moves" swapped: valid JSON, other ids."""
    encoder = json.loads(encoder_json)
    encoder["Ġeffort"], encoder["Ġmoves"] = encoder["Ġmoves"], encoder["Ġeffort"]
    return json.dumps(encoder).encode()


def test_every_load_is_offline_checks_the_files_afresh_and_writes_nothing(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    temp, folder = tmp_path / "temp", tmp_path / "bpe"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where tiktoken would cache
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    shutil.copytree(BPE_DIR, folder)
    before = {p: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert gpt.get_tokenizer(folder).encode(" moves") == [6100]
    assert list(temp.iterdir()) == []
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == before
    (folder / "encoder.json").write_bytes(swap_two_ids((folder / "encoder.json").read_bytes()))
    with pytest.raises(ValueError, match=r"encoder.json is damaged or edited"):
        gpt.get_tokenizer(folder)
    (folder / "vocab.bpe").unlink()
    with pytest.raises(FileNotFoundError, match="vocab.bpe"):  # a missing file is named
        gpt.get_tokenizer(folder)


def test_merges_that_disagree_with_the_ids_are_refused():
    encoder_json = swap_two_ids((BPE_DIR / "encoder.json").read_bytes())
    with pytest.raises(ValueError, match="disagree"):
        gpt_engineering.gpt2_bpe_ranks((BPE_DIR / "vocab.bpe").read_bytes(), encoder_json)


def test_tokenizer_equals_tiktokens_gpt2_read_by_tiktokens_own_loader(tokenizer, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's loader, without its cache
    files = [BPE_DIR / name for name in gpt_engineering.BPE_FILES]  # vocab.bpe, encoder.json
    ranks = data_gym_to_mergeable_bpe_ranks(*map(str, files))
    assert gpt_engineering.gpt2_bpe_ranks(*(f.read_bytes() for f in files)) == ranks
    theirs = tiktoken.Encoding(name="theirs", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                               special_tokens={})
    text = "I'm sure they'll see 2,024 cats...   really?\n\n  Yes  "
    assert tokenizer.encode(text) == theirs.encode(text)


# ---- components ------------------------------------------------------------------------


def test_layernorm_equals_torch_layernorm():
    torch.manual_seed(0)
    x = torch.randn(3, 5, 16) * 4 + 2
    ours = gpt.LayerNorm(16)
    with torch.no_grad():
        ours.scale.uniform_(0.5, 1.5)
        ours.shift.uniform_(-1, 1)
    ref = torch.nn.LayerNorm(16, eps=1e-5)
    ref.load_state_dict({"weight": ours.scale, "bias": ours.shift})
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-5)


def test_gelu_equals_torch_tanh_gelu():
    x = torch.linspace(-8, 8, 1001)
    torch.testing.assert_close(gpt.GELU()(x), F.gelu(x, approximate="tanh"), rtol=1e-6, atol=1e-6)


def test_module_creation_order_matches_the_book(tiny_model):
    block = tiny_model.trf_blocks[0]
    modules = (tiny_model, block, block.att)
    assert [[name for name, _ in module.named_children()] for module in modules] == [
        ["tok_emb", "pos_emb", "drop_emb", "trf_blocks", "final_norm", "out_head"],
        ["att", "ff", "norm1", "norm2", "drop_shortcut"],
        ["W_query", "W_key", "W_value", "out_proj", "dropout"],
    ]


def test_attention_is_causal(tiny_model):
    """Changing token t+1 must leave the logits at positions <= t unchanged."""
    torch.manual_seed(1)
    idx = torch.randint(0, 1000, (1, 10))
    changed = idx.clone()
    changed[0, 6] = (idx[0, 6] + 1) % 1000
    with torch.no_grad():
        before, after = tiny_model(idx), tiny_model(changed)
    torch.testing.assert_close(before[:, :6], after[:, :6], rtol=0, atol=0)
    assert not torch.allclose(before[:, 6:], after[:, 6:])


def test_eval_mode_is_deterministic_and_train_mode_is_not(tiny_model):
    idx = torch.randint(0, 1000, (2, 8))
    with torch.no_grad():
        assert torch.equal(tiny_model(idx), tiny_model(idx))
        tiny_model.train()
        assert not torch.equal(tiny_model(idx), tiny_model(idx))


# ---- GPT-2 small as the book builds it ------------------------------------------------


def test_greedy_generation_reproduces_the_book(gpt2_small, tokenizer):
    idx = gpt.text_to_token_ids("Hello, I am", tokenizer)
    out = gpt.generate_text_simple(gpt2_small, idx, max_new_tokens=6, context_size=1024)
    assert out[0].tolist() == BOOK_OUTPUT_IDS
    assert gpt.token_ids_to_text(out, tokenizer) == BOOK_OUTPUT_TEXT


def test_thread_count_does_not_change_results(gpt2_small):
    """Outputs must not depend on the machine: one thread and two give the same answer."""
    idx = torch.tensor([BOOK_OUTPUT_IDS[:4]])
    threads = torch.get_num_threads()
    logits = []
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            with torch.no_grad():
                logits.append(gpt2_small(idx))
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(logits[0], logits[1], rtol=1e-5, atol=1e-5)
    assert torch.equal(logits[0].argmax(-1), logits[1].argmax(-1))


@pytest.mark.parametrize(
    "name, qkv_bias, total, tied",
    [
        ("gpt2-small", False, 163_009_536, 124_412_160),  # the book's two counts
        ("gpt2-small", True, 163_037_184, 124_439_808),  # 12 blocks x 3 biases x 768 more
        ("gpt2-medium", False, 406_212_608, 354_749_440),
        ("gpt2-large", False, 838_220_800, 773_891_840),
        ("gpt2-xl", False, 1_637_792_000, 1_557_380_800),
    ],
)
def test_analytic_breakdown_equals_numel(name, qkv_bias, total, tied):
    cfg = gpt.gpt2_config(name, qkv_bias=qkv_bias)
    with torch.device("meta"):  # shapes only: no memory, no init time
        model = gpt.GPTModel(cfg)
    breakdown = gpt.parameter_breakdown(cfg)
    assert sum(breakdown.values()) == sum(p.numel() for p in model.parameters()) == total
    assert total - breakdown["output head"] == tied
    assert breakdown["attention"] == cfg["n_layers"] * sum(
        p.numel() for p in model.trf_blocks[0].att.parameters()
    )


@pytest.mark.parametrize("name, changes", [
    ("gpt2-small", {}),
    ("gpt2-xl", {"qkv_bias": True, "drop_rate": 0.0, "context_length": 256}),
    ("gpt2-medium", {"vocab_size": 500, "n_layers": 1, "drop_rate": 0.25}),
])
def test_config_of_reads_the_config_back_off_the_modules(name, changes):
    """The book's GPTModel keeps no config: gpt_engineering.config_of reads it back, every key."""
    cfg = gpt.gpt2_config(name, **changes)
    with torch.device("meta"):
        model = gpt.GPTModel(cfg)
    assert gpt_engineering.config_of(model) == cfg


def test_gpt2_sizes_are_openais_published_configurations():
    """Width, depth and heads of the four released GPT-2 models (OpenAI's hparams.json files)."""
    assert {name: tuple(size.values()) for name, size in gpt.GPT2_SIZES.items()} == {
        "gpt2-small": (768, 12, 12), "gpt2-medium": (1024, 24, 16),
        "gpt2-large": (1280, 36, 20), "gpt2-xl": (1600, 48, 25)}
