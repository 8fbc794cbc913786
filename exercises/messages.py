"""Every text the exercise checks show, one table per language: MESSAGES[language][code].

A language is added as a new table with the same codes and the same {placeholders} (a test
compares them); exercises.checks.set_language(language) switches to it. Identifiers and code in
the texts (nn.Linear, size_mb, 1024**2) stay as they are in every language.
"""

MESSAGES = {"en": {
    # every exercise
    "not_quite": "Not quite:",
    "several": "this value fits {n} mistakes.",
    "could_not_read": "The check could not read this answer ({error}); compare its form with the "
                      "starter code and run this cell again.",
    "config_changed": "Warning: gpt.GPT_CONFIG_124M was changed in place ({keys}), so all that "
                      "reads it later in this session sees the change. Build new configs as "
                      "copies, {{**gpt.GPT_CONFIG_124M, ...}}, and restart the kernel to get the "
                      "original back.",
    "not_filled": "not filled in yet",
    "not_a_number": "should be a number, got {kind}",
    "not_whole": "should be a whole number (an int), got a float with a fractional part",
    "not_scalar": "should be one number, got a tensor of shape {shape}",
    "meta_tensor": "a tensor on the meta device has a shape but no value; compute the number from "
                   "Python ints (numel() returns one)",
    "not_a_dict": "should be a dict, got {kind}",
    "swapped": "{a} and {b} are swapped",
    "hint": "Hint {n} of {total}: {text}",
    "hint_more": "(Run the cell again for a more specific hint.)",
    "no_more_hints": "No more hints: compare your work with solutions/solution_{exercise}.ipynb.",
    "hint_repr": "hint_{exercise}: call it, hint_{exercise}(), to see a hint",
    # exercise 4.1
    "not_attempted_4_1": "Not attempted yet: set ff_params and att_params to your counts, then run "
                         "this cell again.",
    "biases": "the biases are off: each nn.Linear here has one bias per output unit, except "
              "W_query, W_key and W_value (qkv_bias is False)",
    "missing_layer": "a layer is missing: count every nn.Linear that print() lists for the module",
    "mask_counted": "the causal mask is included: it is a buffer, not a trainable parameter (count "
                    "parameters(), not the state_dict)",
    "heads_share": "the heads have no weights of their own: all {n_heads} share W_query, W_key, "
                   "W_value and out_proj, each head using a slice of head_dim = {head_dim} columns",
    "all_blocks": "that is all {n_layers} blocks together; count the module of a single block",
    "whole_block": "that is the whole transformer block; count only this one module",
    "other_module": "that is the other module's count",
    "wrong_count_4_1": "not the right count (counts must match exactly); add up the weights and the "
                       "biases of every nn.Linear in the module",
    "correct_4_1": "Correct: both counts match exactly. Now explain why one module is about twice "
                   "the size of the other.",
    "hint_4_1_1": "both modules are made of nn.Linear layers; GELU, dropout and the causal mask "
                  "hold no trainable parameters. print(block.ff) and print(block.att) list the "
                  "layers with their in_features, out_features and whether they have a bias.",
    "hint_4_1_2": "an nn.Linear(n_in, n_out) holds an n_out x n_in weight matrix plus n_out biases, "
                  "unless it was created with bias=False. Add that up layer by layer. To confirm "
                  "with PyTorch: module.parameters() yields every weight and bias tensor, and a "
                  "tensor's numel() is its number of entries.",
    # exercise 4.2
    "not_attempted_4_2": "Not attempted yet: fill in the configs and the results, then run this "
                         "cell again.",
    "missing_names": "no entry for {names} (the names are {expected})",
    "unknown_names": "{names} is not one of the names {expected}",
    "config_keys": "its keys differ from GPT_CONFIG_124M's ({keys}); start from a copy of it",
    "base_changed": "{keys} changed; only emb_dim, n_layers and n_heads differ between the sizes",
    "size_value_off": "not this size's value; take it from the table of the four sizes",
    "unknown_keys": "unknown key(s) {keys}; the keys are {expected}",
    "head_left_out": "the output head is left out; total_params counts every parameter",
    "not_from_config": "the model was built with GPT-2 small's {fields}: build it from this "
                       "size's config",
    "qkv_biases": "includes query, key and value biases; this exercise keeps qkv_bias False, as in "
                  "GPT_CONFIG_124M",
    "other_size": "that is the figure of {other}",
    "wrong_total": "not the right count (counts must match exactly); sum numel() over all of the "
                   "model's parameters",
    "head_counted": "the output head is still counted; with weight tying it reuses the token "
                    "embedding's matrix, so leave its parameters out",
    "both_vocab": "both vocabulary-sized matrices are subtracted; tying shares one matrix between "
                  "tok_emb and out_head, so count it once",
    "pos_subtracted": "the position embedding is subtracted too; only the output head is shared "
                      "with the token embedding",
    "follows_total": "follows from total_params, which needs fixing first",
    "wrong_tied": "not the right count (counts must match exactly); subtract the output head's "
                  "parameters from the total",
    "mb_rounding": "rounded too coarsely; keep two decimals (the check accepts anything within "
                   "{mb_tolerance} MB), e.g. round(size_mb, 2)",
    "mb_unit": "not in MB: here MB means bytes / 1024**2 (not bytes, kilobytes, gigabytes or "
               "bytes / 1000**2)",
    "mb_bytes_per_param": "the bytes per parameter are off: a float32 number takes 4 bytes",
    "mb_from_tied": "computed from tied_params; the model as built stores all of its parameters, "
                    "the output head included",
    "wrong_size": "not the right size; float32 takes 4 bytes per parameter, MB means "
                  "bytes / 1024**2, and the check accepts anything within {mb_tolerance} MB",
    "correct_4_2": "Correct: every size matches (counts exactly, size_mb within {mb_tolerance} MB). "
                   "Notice what share of the total the output head takes in medium, and how much "
                   "less in XL.",
    "hint_4_2_1": "each size needs a config of its own: a copy of gpt.GPT_CONFIG_124M (leave the "
                  "original alone) with that size's emb_dim, n_layers and n_heads from the table. "
                  "Build each model inside `with torch.device('meta'):`, which gives every "
                  "parameter its real shape without allocating memory.",
    "hint_4_2_2": "total_params adds up the number of entries of every parameter tensor of the "
                  "model. tied_params leaves out the weight of model.out_head, the matrix that "
                  "weight tying would share with model.tok_emb. size_mb: a float32 number takes 4 "
                  "bytes, and MB here means bytes / 1024**2.",
    # exercise 4.3
    "not_attempted_4_3": "Not attempted yet: complete the two constructors, assigning each part to "
                         "self, and build `model` from CONFIG_4_3, then run this cell again.",
    "pass_instance": "pass the built model (an instance, e.g. YourModel(cfg)), not the class",
    "is_config": "this is a config; build the model from it and pass the model",
    "not_module": "expected a torch nn.Module, got {kind}",
    "site_missing": "is not an nn.Dropout (keep gpt.py's module names so the check finds it)",
    "no_blocks": "should be a non-empty nn.Sequential of blocks (keep gpt.py's module names)",
    "one_rate": "every dropout has the same rate: create each one from its own rate in the config",
    "differs_between_blocks": "the rate differs between blocks: are all the blocks in trf_blocks "
                              "built by the same class?",
    "rate_of_other_site": "has the rate given as {key}; this dropout should read {own}",
    "rate_unknown": "has a rate that is none of the three in the config (compared to within "
                    "{rate_tolerance})",
    "unverified_meta": "Cannot verify on the meta device: the three rates sit at the right sites, "
                       "but a model without data cannot run, so the check cannot see whether "
                       "forward applies them. Build the model on the CPU (it is small) and run "
                       "this cell again.",
    "forward_failed": "running the model on two tokens failed ({error})",
    "never_applied": "is never applied in forward",
    "correct_4_3": "Correct: each of the three dropout sites has its own rate, and forward "
                   "applies every one of them.",
    "hint_4_3_1": "three constructors create the dropouts: gpt.GPTModel's creates drop_emb, "
                  "gpt.TransformerBlock's creates drop_shortcut, and gpt.MultiHeadAttention "
                  "creates its own from the rate passed as its `dropout` argument. Your two "
                  "classes create the same parts, in the same order, as those in gpt.py; only the "
                  "rates they read change.",
    "hint_4_3_2": "in your block, MultiHeadAttention's `dropout` argument takes the "
                  "attention-weights rate and drop_shortcut the shortcut rate; in your model, "
                  "drop_emb takes the embedding rate, and trf_blocks stacks cfg['n_layers'] of "
                  "your blocks (not gpt.TransformerBlock, which reads drop_rate).",
}}
