"""The KV cache of kv_cache.py, made fast: the same ids, for inference only.

    fast = FastGPT(model)                       # convert a gpt.GPTModel once
    out = generate_fast(fast, idx, 200, 1024)   # the ids generate_text_simple returns

FastGPT copies the matrices it lays out and shares the rest: convert again after changing the
model's weights. What makes it fast: bonus/kv_cache/README.md.
"""

import torch
import torch.nn.functional as F

from gpt_engineering import check_generation_args, check_num_tokens, config_of


def by_column(weight):
    """The same matrix (values, shape) stored column by column: `weight.t()` is contiguous."""
    return weight.t().contiguous().t()


def lay_out(weight):
    """A weight matrix in the layout that streamed fastest in a one-token step.

    A one-token step multiplies a single vector by every matrix, so its speed is how fast the
    matrices stream from memory. Measured for every matrix shape of GPT-2 on a 2-core machine:
    by column for matrices with at least as many outputs as inputs, by row (nn.Linear's own
    layout, kept as it is) for the feed-forward's contracting layer.
    """
    out_features, in_features = weight.shape
    return by_column(weight) if out_features >= in_features else weight.contiguous()


def new_cache(cfg, batch_size, length, device=None, dtype=torch.float32):
    """Zeroed room for the keys and values of `length` positions in every layer.

    Shape [n_layers, 2 (keys, values), batch, heads, length, head_dim], allocated once:
    each step writes its keys and values in place, where torch.cat would copy the whole cache.
    """
    head_dim = cfg["emb_dim"] // cfg["n_heads"]
    shape = (cfg["n_layers"], 2, batch_size, cfg["n_heads"], length, head_dim)
    return torch.zeros(shape, device=device, dtype=dtype)


def layer_norm(x, norm):
    """The gpt.LayerNorm `norm` in one fused kernel (the same biased variance)."""
    return F.layer_norm(x, norm.scale.shape, norm.scale, norm.shift, norm.eps)


class FastBlock:
    """One gpt.TransformerBlock's weights, and its computation for a cached step."""

    def __init__(self, block):
        att = block.att
        self.num_heads, self.head_dim, self.d_out = att.num_heads, att.head_dim, att.d_out
        # The query, key and value projections as one matrix [3 * d_out, d_in]: one stream
        # through memory instead of three (the three outputs side by side).
        projections = (att.W_query, att.W_key, att.W_value)
        self.qkv_weight = lay_out(torch.cat([proj.weight for proj in projections]))
        has_bias = att.W_query.bias is not None
        self.qkv_bias = torch.cat([proj.bias for proj in projections]) if has_bias else None
        self.out_proj = lay_out(att.out_proj.weight), att.out_proj.bias
        self.norm1, self.norm2 = block.norm1, block.norm2
        expand, _gelu, contract = block.ff.layers  # gpt.FeedForward: Linear, GELU, Linear
        self.ff_expand = lay_out(expand.weight), expand.bias
        self.ff_contract = lay_out(contract.weight), contract.bias

    def __call__(self, x, kv, start_pos):
        x = x + self.attend(layer_norm(x, self.norm1), kv, start_pos)
        hidden = F.linear(layer_norm(x, self.norm2), *self.ff_expand)
        # gpt.GELU's tanh formula in one kernel instead of a chain of element-wise operations.
        return x + F.linear(F.gelu(hidden, approximate="tanh"), *self.ff_contract)

    def attend(self, x, kv, start_pos):
        """Causal self-attention of `x`, its first token at `start_pos`, over the cache `kv`."""
        b, num_tokens, _ = x.shape
        qkv = F.linear(x, self.qkv_weight, self.qkv_bias)
        qkv = qkv.view(b, num_tokens, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv  # each (b, num_heads, num_tokens, head_dim)
        if kv is not None:
            end = start_pos + num_tokens
            kv[:, :, :, start_pos:end] = qkv[1:]  # keys and values, in place, in one copy
            keys, values = kv[0, :, :, :end], kv[1, :, :, :end]
        # Scores, mask, softmax and weighted sum in one fused kernel. Several tokens start at
        # position 0 (FastGPT checks it), where is_causal's mask is exactly the chapter's mask;
        # a single new token may see every cached position, so it needs no mask at all.
        context = F.scaled_dot_product_attention(queries, keys, values, is_causal=num_tokens > 1)
        context = context.transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return F.linear(context, *self.out_proj)


class FastGPT:
    """A gpt.GPTModel's weights laid out for fast greedy generation. Inference only: it
    converts and runs under torch.no_grad.

    Computes what the model computes in eval mode, within float rounding (about 1e-6).
    """

    @torch.no_grad()
    def __init__(self, model):
        self.cfg = config_of(model)  # the config it was built from, for the checks and caches
        self.tok_emb = model.tok_emb.weight  # looked up, not multiplied: shared
        self.pos_emb = model.pos_emb.weight
        self.blocks = [FastBlock(block) for block in model.trf_blocks]
        self.final_norm = model.final_norm
        self.out_head = lay_out(model.out_head.weight)

    @torch.no_grad()
    def __call__(self, in_idx, cache=None, start_pos=0, last_only=False):
        """Logits for the ids `in_idx`, its first token at position `start_pos`.

        With a `cache` (from new_cache), every layer writes the keys and values of the new
        tokens at their positions and attends over all positions cached so far. The input is
        either a sequence from position 0 (a "prefill") or a single token.
        """
        num_tokens = in_idx.shape[1]
        end = start_pos + num_tokens
        if num_tokens > 1 and start_pos:
            raise ValueError("several tokens at once must start at position 0")
        check_num_tokens(end, self.cfg["context_length"])
        if cache is not None and end > cache.shape[4]:
            raise ValueError(f"positions up to {end} do not fit the cache")
        positions = torch.arange(start_pos, end, device=in_idx.device)
        x = F.embedding(in_idx, self.tok_emb) + self.pos_emb[positions]
        for i, block in enumerate(self.blocks):
            x = block(x, None if cache is None else cache[i], start_pos)
        if last_only:
            x = x[:, -1:]  # all that generation needs: the head is the largest matrix
        return F.linear(layer_norm(x, self.final_norm), self.out_head)


def generate_fast(fast, idx, max_new_tokens, context_size):
    """gpt.generate_text_simple on a FastGPT: same arguments, same ids.

    Convert the model once with FastGPT(model) and reuse the result for every call.
    """
    check_generation_args(fast, idx, max_new_tokens, context_size)
    window = idx[:, -context_size:]
    # The longest window the model will see (the last new token is never fed back); a window
    # longer than context_length stops at fast(...), as generate_text_simple stops at model(...).
    longest = min(window.shape[1] + max_new_tokens - 1, context_size)
    new_ids = []
    # inference_mode: like no_grad, and it also skips autograd's version counting.
    with torch.inference_mode():
        weight = fast.tok_emb
        cache = new_cache(fast.cfg, idx.shape[0], longest, weight.device, weight.dtype)
        feed, start = window, 0  # the first step feeds the whole window at once (a prefill)
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
