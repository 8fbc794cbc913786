"""Fast greedy generation for the chapter's GPT-2: a KV cache and fused kernels.

    out = generate_cached(model, idx, 200, 1024)  # the ids generate_text_simple returns
    fast = KVCacheGPT.from_gpt(model)             # convert once to generate many times

`generate_text_simple` (gpt.py) runs the whole context through the model for every new token,
so the token at position t costs work proportional to t. In a causal model, though, the keys
and values of earlier positions do not change when a token is appended (earlier positions
cannot see later ones). Keeping them in a cache, each step only processes the new token.
The notebook bonus/01_kv_cache.ipynb explains and measures each choice made here.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt


def new_cache(cfg, batch_size, length, device=None, dtype=torch.float32):
    """Zeroed room for the keys and values of `length` positions in every layer.

    Shape [n_layers, 2 (keys, values), batch, heads, length, head_dim], allocated once:
    generation then writes into it in place instead of growing tensors step by step.
    """
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    shape = (cfg["n_layers"], 2, batch_size, cfg["n_heads"], length, head_dim)
    return torch.zeros(shape, device=device, dtype=dtype)


def layer_norm(norm, x):
    """gpt.LayerNorm's computation in one fused kernel (same biased variance, same eps)."""
    return F.layer_norm(x, norm.scale.shape, norm.scale, norm.shift, norm.eps)


def by_column(weight):
    """The same matrix (values, shape) with each column contiguous in memory."""
    return weight.t().contiguous().t()


class KVCacheGPT(gpt.GPTModel):
    """GPTModel with the same parameter names and values, and a forward that can use a cache.

    Being a GPTModel subclass, it loads a GPTModel state dict unchanged. There is no dropout
    here: the model is meant for inference and computes what GPTModel computes in eval mode.
    """

    def __init__(self, cfg):
        super().__init__(cfg)
        self._lay_out_weights()
        # load_state_dict copies values into the layout, except with assign=True, which
        # takes the given tensors as they are: lay those out again after every load.
        self.register_load_state_dict_post_hook(lambda module, _: module._lay_out_weights())

    @classmethod
    def from_gpt(cls, model):
        """A KVCacheGPT with `model`'s weights. Matrices are copied; `model` is untouched."""
        with torch.device("meta"):  # shapes only: skip the random init, the weights come next
            fast = cls(model.cfg)
        fast.load_state_dict(model.state_dict(), assign=True)
        return fast.eval()

    @torch.no_grad()
    def _lay_out_weights(self):
        """Arrange the weights in memory for fast one-token steps; values and names stay.

        A one-token step multiplies a single vector by every weight matrix, so its speed is
        how fast the matrices stream from memory. Two arrangements measured faster:
        - each block's query, key and value projections as one matrix (one multiplication
          instead of three smaller ones); W_query, W_key and W_value become views into it;
        - a matrix with at least as many outputs as inputs stored column by column.
        """
        for block in self.trf_blocks:
            att = block.att
            projections = (att.W_query, att.W_key, att.W_value)
            for name in ("weight", "bias"):
                if getattr(att.W_query, name) is None:  # qkv_bias=False
                    att.register_buffer(f"qkv_{name}", None)
                    continue
                fused = torch.cat([getattr(proj, name) for proj in projections])
                fused = by_column(fused) if name == "weight" else fused
                att.register_buffer(f"qkv_{name}", fused, persistent=False)
                for proj, part in zip(projections, fused.chunk(3)):
                    setattr(proj, name, nn.Parameter(part))
        for module in self.modules():
            # (Non-contiguous weights are already by column: the views made above.)
            wide = isinstance(module, nn.Linear) and module.out_features >= module.in_features
            if wide and module.weight.is_contiguous():
                module.weight = nn.Parameter(by_column(module.weight))

    def forward(self, in_idx, cache=None, start_pos=0, last_only=False):
        """Logits for `in_idx` (valid ids, not checked here), its first token at `start_pos`.

        With a `cache`, every layer writes the keys and values of the new tokens at their
        positions and attends over all positions cached so far. The input is either a
        sequence from position 0 (a "prefill") or a single token. `last_only` computes the
        logits of the last position only, which is all that generation needs.
        """
        num_tokens = in_idx.shape[1]
        if num_tokens > 1 and start_pos:
            raise ValueError("several tokens at once must start at position 0")
        positions = torch.arange(start_pos, start_pos + num_tokens, device=in_idx.device)
        x = self.tok_emb(in_idx) + self.pos_emb(positions)
        for i, block in enumerate(self.trf_blocks):
            kv = None if cache is None else cache[i]
            x = x + attention(block.att, layer_norm(block.norm1, x), kv, start_pos)
            x = x + feed_forward(block.ff, layer_norm(block.norm2, x))
        if last_only:
            x = x[:, -1:]
        return self.out_head(layer_norm(self.final_norm, x))


def attention(att, x, kv, start_pos):
    """Causal self-attention for gpt.MultiHeadAttention's weights, optionally cached."""
    b, num_tokens, _ = x.shape
    qkv = F.linear(x, att.qkv_weight, att.qkv_bias)
    qkv = qkv.view(b, num_tokens, 3, att.num_heads, att.head_dim).permute(2, 0, 3, 1, 4)
    q, k, v = qkv  # each (b, heads, tokens, head_dim)
    if kv is not None:
        end = start_pos + num_tokens
        kv[:, :, :, start_pos:end] = qkv[1:]  # keys and values in one copy
        k, v = kv[0, :, :, :end], kv[1, :, :, :end]
    # A prefill starts at position 0, where is_causal's mask is exactly the chapter's mask.
    # A single new query may see every cached position, so it needs no mask at all.
    context = F.scaled_dot_product_attention(q, k, v, is_causal=num_tokens > 1)
    return att.out_proj(context.transpose(1, 2).reshape(b, num_tokens, att.d_out))


def feed_forward(ff, x):
    expand, _, contract = ff.layers  # the middle one is gpt.GELU: fused below
    return contract(F.gelu(expand(x), approximate="tanh"))


def generate_cached(model, idx, max_new_tokens, context_size):
    """Greedy decoding like gpt.generate_text_simple, with a KV cache: same arguments, same ids.

    `model` is a gpt.GPTModel, used as in eval mode (no dropout). Any GPTModel is converted
    with KVCacheGPT.from_gpt first; pass a KVCacheGPT to skip that when calling repeatedly.
    """
    gpt.check_generation_args(idx, max_new_tokens, context_size)
    if max_new_tokens == 0:
        return idx
    cfg = model.cfg
    window = idx[:, -context_size:]
    gpt.check_token_ids(window, cfg["vocab_size"], cfg["context_length"])
    # The longest window the model will see (the last new token is never fed back).
    longest = min(idx.shape[1] + max_new_tokens - 1, context_size)
    if longest > cfg["context_length"]:
        raise ValueError(
            f"the window grows to {longest} tokens but the model's context_length is "
            f"{cfg['context_length']} (pass context_size <= {cfg['context_length']})"
        )

    fast = model if isinstance(model, KVCacheGPT) else KVCacheGPT.from_gpt(model)
    new_ids = []
    with torch.inference_mode():
        weight = fast.tok_emb.weight
        cache = new_cache(cfg, idx.shape[0], longest, weight.device, weight.dtype)
        feed, start = window, 0  # the first step feeds the whole prompt at once (a prefill)
        for _ in range(max_new_tokens):
            logits = fast(feed, cache, start, last_only=True)
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)  # argmax(softmax(z)) = argmax(z)
            new_ids.append(next_id)
            if window.shape[1] < context_size:  # room left: next, feed only the new token
                feed, start = next_id, window.shape[1]
                window = torch.cat((window, next_id), dim=1)
            else:
                # The window slides: every token moves one position back, which changes its
                # position embedding and so every key and value. Recompute the whole window.
                window = torch.cat((window[:, 1:], next_id), dim=1)
                feed, start = window, 0
    # Outside inference mode, so the result is an ordinary tensor, like generate_text_simple's.
    return torch.cat((idx, *new_ids), dim=1)
