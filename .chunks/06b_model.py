class GPTModel(nn.Module):
    """GPT-2: token + position embeddings, a stack of transformer blocks, a linear head."""

    def __init__(self, cfg):
        super().__init__()
        check_config(cfg)
        self.cfg = dict(cfg)
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        check_token_ids(in_idx, self.cfg["vocab_size"], self.cfg["context_length"])
        num_tokens = in_idx.shape[1]
        positions = torch.arange(num_tokens, device=in_idx.device)
        x = self.tok_emb(in_idx) + self.pos_emb(positions)  # (batch, tokens, emb_dim)
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        return self.out_head(x)  # logits: (batch, tokens, vocab_size)
