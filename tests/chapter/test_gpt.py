"""Unit tests for gpt.py: each component against a reference, then the whole model."""

import json
import socket
import tempfile
from pathlib import Path

import pytest
import tiktoken
import torch
import torch.nn.functional as F
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
from tiktoken_ext.openai_public import r50k_pat_str

import gpt
import gpt_engineering
from tests.helpers import BOOK_OUTPUT_IDS, BOOK_OUTPUT_TEXT, HELLO_IDS, TINY_CONFIG

BPE_DIR = Path(gpt.__file__).parent / "data" / "gpt2-bpe"


# ---- tokenizer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ids",
    [
        ("Every effort moves you", [6109, 3626, 6100, 345]),
        ("Every day holds a", [6109, 1110, 6622, 257]),
        ("Hello, I am", HELLO_IDS),
    ],
)
def test_tokenizer_gives_standard_gpt2_ids(tokenizer, text, ids):
    assert tokenizer.encode(text) == ids
    assert tokenizer.decode(ids) == text


def test_tokenizer_knows_end_of_text(tokenizer):
    assert tokenizer.n_vocab == 50257
    assert gpt.text_to_token_ids("<|endoftext|>", tokenizer).tolist() == [[50256]]


def test_tokenizer_builds_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert gpt.get_tokenizer().encode("Hello, I am") == HELLO_IDS


def copy_bpe_files(folder):
    for name in gpt_engineering.BPE_FILES:
        (folder / name).write_bytes((BPE_DIR / name).read_bytes())
    return folder


def swap_two_ids(encoder_json):
    """encoder.json with the ids of " effort" and " moves" swapped: valid JSON, other ids."""
    encoder = json.loads(encoder_json.read_text())
    encoder["Ġeffort"], encoder["Ġmoves"] = encoder["Ġmoves"], encoder["Ġeffort"]
    encoder_json.write_text(json.dumps(encoder))


@pytest.mark.parametrize("cache_dir", [None, ""])  # tiktoken's default cache; caching disabled
def test_a_file_edited_after_a_good_load_is_refused(tmp_path, monkeypatch, cache_dir):
    if cache_dir is None:
        monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", cache_dir)
    folder = copy_bpe_files(tmp_path)
    assert gpt.get_tokenizer(folder).encode(" moves") == [6100]
    swap_two_ids(folder / "encoder.json")
    with pytest.raises(ValueError, match=r"encoder.json is damaged or edited"):
        gpt.get_tokenizer(folder)


def test_tokenizer_writes_nothing_outside_its_folder(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where tiktoken would cache
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    (tmp_path / "bpe").mkdir()
    folder = copy_bpe_files(tmp_path / "bpe")
    before = {p: p.stat().st_mtime_ns for p in folder.iterdir()}
    gpt.get_tokenizer(folder)
    assert list(temp.iterdir()) == []
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_merges_that_disagree_with_the_ids_are_refused():
    vocab_bpe = (BPE_DIR / "vocab.bpe").read_bytes()
    encoder_json = json.loads((BPE_DIR / "encoder.json").read_bytes())
    encoder_json["Ġeffort"], encoder_json["Ġmoves"] = encoder_json["Ġmoves"], encoder_json["Ġeffort"]
    with pytest.raises(ValueError, match="disagree"):
        gpt_engineering.gpt2_bpe_ranks(vocab_bpe, json.dumps(encoder_json).encode())


def test_tokenizer_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="vocab.bpe"):
        gpt.get_tokenizer(tmp_path)


def test_text_is_cut_into_pieces_as_tiktokens_gpt2_cuts_it(tokenizer):
    text = "I'm sure they'll see 2,024 cats...   really?\n\n  Yes  "
    ranks = gpt_engineering.gpt2_bpe_ranks(*((BPE_DIR / name).read_bytes()
                                             for name in gpt_engineering.BPE_FILES))
    theirs = tiktoken.Encoding(name="theirs", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                               special_tokens={})
    assert tokenizer.encode(text) == theirs.encode(text)


def test_ranks_equal_tiktokens_own_loader(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's loader, without its cache
    expected = data_gym_to_mergeable_bpe_ranks(str(BPE_DIR / "vocab.bpe"),
                                               str(BPE_DIR / "encoder.json"))
    ours = gpt_engineering.gpt2_bpe_ranks(*(f.read_bytes() for f in (BPE_DIR / "vocab.bpe",
                                                         BPE_DIR / "encoder.json")))
    assert ours == expected


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


def test_module_creation_order_matches_the_book():
    model = gpt.GPTModel(TINY_CONFIG)
    assert [name for name, _ in model.named_children()] == [
        "tok_emb", "pos_emb", "drop_emb", "trf_blocks", "final_norm", "out_head"
    ]
    block = model.trf_blocks[0]
    assert [name for name, _ in block.named_children()] == [
        "att", "ff", "norm1", "norm2", "drop_shortcut"
    ]
    assert [name for name, _ in block.att.named_children()] == [
        "W_query", "W_key", "W_value", "out_proj", "dropout"
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


def test_gpt2_small_parameter_counts(gpt2_small):
    total = sum(p.numel() for p in gpt2_small.parameters())
    assert total == 163_009_536
    assert total - gpt2_small.out_head.weight.numel() == 124_412_160
    assert gpt2_small.tok_emb.weight.shape == gpt2_small.out_head.weight.shape == (50257, 768)
    assert round(total * 4 / 1024**2, 2) == 621.83


@pytest.mark.parametrize(
    "name, total, tied",
    [
        ("gpt2-medium", 406_212_608, 354_749_440),
        ("gpt2-large", 838_220_800, 773_891_840),
        ("gpt2-xl", 1_637_792_000, 1_557_380_800),
    ],
)
def test_analytic_breakdown_equals_numel(name, total, tied):
    cfg = gpt.gpt2_config(name)
    with torch.device("meta"):  # shapes only: no memory, no init time
        model = gpt.GPTModel(cfg)
    breakdown = gpt.parameter_breakdown(cfg)
    assert sum(breakdown.values()) == sum(p.numel() for p in model.parameters()) == total
    assert total - breakdown["output head"] == tied
    assert breakdown["attention"] == cfg["n_layers"] * sum(
        p.numel() for p in model.trf_blocks[0].att.parameters()
    )


def test_breakdown_counts_qkv_bias():
    cfg = {**TINY_CONFIG, "qkv_bias": True}
    with torch.device("meta"):
        model = gpt.GPTModel(cfg)
    assert sum(gpt.parameter_breakdown(cfg).values()) == sum(p.numel() for p in model.parameters())
