"""Linear attention computed two ways: all positions at once, or one token at a time with a
state of fixed size.

    out = parallel_form(q, k, v, beta, alpha)          # every position at once
    out, state = recurrent_form(q, k, v, beta, alpha)  # a loop over recurrent_step

No beta or alpha: linear attention; beta: DeltaNet; both: Gated DeltaNet. The rules, and the
normalised form: bonus/linear_attention/README.md.
"""

import torch
import torch.nn.functional as F


def recurrent_step(state, q, k, v, beta=None, alpha=None):
    """One token: update the (..., d_v, d_k) state with k and v, then read it with q.

    q, k are (..., d_k), v is (..., d_v), beta and alpha (...,). Returns (new state, output).
    """
    if alpha is not None:
        state = alpha[..., None, None] * state  # keep a fraction alpha of every stored value
    if beta is None:
        write = v  # linear attention: add v k^T
    else:
        # The delta rule: what k retrieves now moves a fraction beta of the way towards v.
        retrieved = (state @ k.unsqueeze(-1)).squeeze(-1)
        write = beta.unsqueeze(-1) * (v - retrieved)
    state = state + write.unsqueeze(-1) @ k.unsqueeze(-2)  # outer product: (d_v, 1) @ (1, d_k)
    return state, (state @ q.unsqueeze(-1)).squeeze(-1)


def recurrent_form(q, k, v, beta=None, alpha=None):
    """All outputs, one token at a time from a zero state; returns (outputs, final state)."""
    state = q.new_zeros(*q.shape[:-2], v.shape[-1], k.shape[-1])
    outputs = []
    for t in range(q.shape[-2]):
        gates = [None if g is None else g[..., t] for g in (beta, alpha)]
        state, out = recurrent_step(state, q[..., t, :], k[..., t, :], v[..., t, :], *gates)
        outputs.append(out)
    return torch.stack(outputs, dim=-2), state


def parallel_form(q, k, v, beta=None, alpha=None):
    """All outputs at once, with no state: the same numbers as recurrent_form.

    Unrolling the recurrence gives S_t = sum_{i<=t} (gamma_t / gamma_i) u_i k_i^T, where
    gamma_t is the product of alpha up to t (1 without gates) and u_i is what step i writes:
    v_i for linear attention, beta_i (v_i - alpha_i S_{i-1} k_i) for the delta rule. Then
    o_t = sum_{i<=t} (gamma_t / gamma_i) (q_t . k_i) u_i, and the u_i solve one triangular
    linear system, (I + diag(beta) L) U = diag(beta) V with L_ti = (gamma_t / gamma_i)(k_t . k_i)
    for i < t.
    """
    num_tokens = q.shape[-2]
    causal = torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=q.device).tril()
    if alpha is None:
        decay = causal.to(q.dtype)
    else:
        log_gamma = torch.log(alpha).cumsum(dim=-1)
        log_ratio = log_gamma.unsqueeze(-1) - log_gamma.unsqueeze(-2)  # log(gamma_t / gamma_i)
        decay = torch.exp(log_ratio.masked_fill(~causal, -torch.inf))  # 0 above the diagonal
    if beta is None:
        writes = v
    else:
        beta_l = beta.unsqueeze(-1) * (k @ k.transpose(-2, -1)) * decay.tril(diagonal=-1)
        # unitriangular: the solver takes the diagonal to be 1, so it solves with I + diag(beta) L.
        writes = torch.linalg.solve_triangular(beta_l, beta.unsqueeze(-1) * v, upper=False,
                                               unitriangular=True)
    return ((q @ k.transpose(-2, -1)) * decay) @ writes


def elu_feature_map(x):
    """phi(x) = elu(x) + 1, element-wise: x + 1 for x > 0, e^x otherwise; always positive
    (in float32, e^x - 1 + 1 rounds to 0 below about x = -17)."""
    return F.elu(x) + 1


def normalized_weights(q, k):
    """The (..., tokens, tokens) weights of normalised causal linear attention: row t holds
    phi(q_t) . phi(k_i) divided by its sum over i <= t, and 0 for i > t."""
    scores = (elu_feature_map(q) @ elu_feature_map(k).transpose(-2, -1)).tril()  # 0 for i > t
    return scores / scores.sum(dim=-1, keepdim=True)


def normalized_parallel_form(q, k, v):
    """Katharopoulos et al.'s normalised causal linear attention, all positions at once."""
    return normalized_weights(q, k) @ v


def normalized_recurrent_form(q, k, v):
    """The same numbers one token at a time; returns (outputs, (final state S, normaliser z)).

    The state S (..., d_v, d_k) and the normaliser z (..., d_k) are recurrent_form's linear
    attention on phi(q), phi(k): S with the values v, z with a value of 1 at every position, so
    that z_t . phi(q_t) is the sum of the weights before normalising.
    """
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
    numerators, state = recurrent_form(phi_q, phi_k, v)
    weight_sums, normalizer = recurrent_form(phi_q, phi_k, torch.ones_like(v[..., :1]))
    return numerators / weight_sums, (state, normalizer.squeeze(-2))


def kv_cache_costs(cfg, num_keys):
    """Softmax attention with a KV cache, per layer and sequence, for one new token attending to
    `num_keys` positions: (numbers the cache holds, FLOPs of the scores and the weighted sum)."""
    d = cfg["emb_dim"]
    return 2 * num_keys * d, 2 * 2 * num_keys * d  # a key and a value per position


def state_costs(cfg, delta_rule=True):
    """The recurrent form with gpt.MultiHeadAttention's head layout, per layer and sequence, for
    one new token: (numbers the state holds, FLOPs of recurrent_step's matrix products).

    Each head keeps a head_dim x head_dim state; a step multiplies it by a vector twice (write,
    read), the delta rule once more (what the key retrieves). Element-wise work, like the gates,
    counts nothing, as in FlopCounterMode.
    """
    heads, head_dim = cfg["n_heads"], cfg["emb_dim"] // cfg["n_heads"]
    products = 3 if delta_rule else 2
    return heads * head_dim * head_dim, products * 2 * heads * head_dim * head_dim
