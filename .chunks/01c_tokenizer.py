# The two GPT-2 BPE files ship with the course, so tokenizing never needs the network.
# tiktoken checks them against the official SHA-256 sums before using them.
BPE_FILES = {
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
}


def get_tokenizer(bpe_dir=None):
    """The GPT-2 tokenizer, built offline from the BPE files in `bpe_dir`.

    By default the files are the ones in `data/gpt2-bpe/` next to this module.
    """
    bpe_dir = Path(bpe_dir) if bpe_dir is not None else Path(__file__).parent / "data" / "gpt2-bpe"
    for name in BPE_FILES:
        if not (bpe_dir / name).is_file():
            raise FileNotFoundError(f"GPT-2 tokenizer file not found: {bpe_dir / name}")
    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=str(bpe_dir / "vocab.bpe"),
        encoder_json_file=str(bpe_dir / "encoder.json"),
        vocab_bpe_hash=BPE_FILES["vocab.bpe"],
        encoder_json_hash=BPE_FILES["encoder.json"],
    )
    return tiktoken.Encoding(
        name="gpt2",
        explicit_n_vocab=50257,
        pat_str=r50k_pat_str,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 50256},
    )


def text_to_token_ids(text, tokenizer):
    """Encode `text` into a [1, num_tokens] tensor (a batch of one)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text:
        raise ValueError("text is empty: the model needs at least one token to continue")
    ids = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    return torch.tensor(ids).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    """Decode a [1, num_tokens] (or flat) tensor of ids back to text."""
    return tokenizer.decode(token_ids.flatten().tolist())
