class LayerNorm(nn.Module):
    """Normalize each token vector to mean 0 and variance 1, then rescale and shift."""

    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5  # keeps the division safe when the variance is ~0
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)  # divide by n, as GPT-2 does
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift
