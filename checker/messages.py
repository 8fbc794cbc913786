"""The English texts of the checks: ENGLISH[code], with {placeholders} filled by the check.

The Chinese ones are translated in locale/zh/checker/messages.po (tools/zh_sync.py makes
checker/messages_zh.py from it). Identifiers and code in the texts (nn.Linear, size_mb, 1024**2)
stay as they are in every language.
"""

ENGLISH = {
    # every exercise
    "not_quite": "Not quite:",
    "several": "this value fits {n} mistakes.",
    "numbered": "({i}) {text}.",
    "sep_sentences": " ",  # between the sentences of one line of feedback
    "sep_field": ": ",  # between the subject, the field and the text of a line
    "sep_names": ", ",  # between the subjects of a line
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
    "hint_more": " (Run the cell again for a more specific hint.)",
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
                  "Build each model inside with torch.device('meta'):, which gives every "
                  "parameter its real shape without allocating memory.",
    "hint_4_2_2": "total_params adds up the number of entries of every parameter tensor of the "
                  "model. tied_params leaves out the weight of model.out_head, the matrix that "
                  "weight tying would share with model.tok_emb. size_mb: a float32 number takes 4 "
                  "bytes, and MB here means bytes / 1024**2.",
    # exercise 4.3
    "not_attempted_4_3": "Not attempted yet: complete the two constructors, assigning each part to "
                         "self, and build model from CONFIG_4_3, then run this cell again.",
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
                  "creates its own from the rate passed as its dropout argument. Your two "
                  "classes create the same parts, in the same order, as those in gpt.py; only the "
                  "rates they read change.",
    "hint_4_3_2": "in your block, MultiHeadAttention's dropout argument takes the "
                  "attention-weights rate and drop_shortcut the shortcut rate; in your model, "
                  "drop_emb takes the embedding rate, and trf_blocks stacks cfg['n_layers'] of "
                  "your blocks (not gpt.TransformerBlock, which reads drop_rate).",
    # check_component and compare_models (exercises/components.py)
    "not_attempted_component": "Not attempted yet: your code still raises NotImplementedError. "
                               "Fill in the stub, then run this cell again.",
    "pass_class": "Pass the class itself, e.g. check_component({kind}), not a built {kind}; to "
                  "compare two built models use compare_models(yours, reference).",
    "not_component": "Expected one of the chapter's classes or generate_text_simple, got {kind}.",
    "unknown_component": "No chapter component is called {name}; the check knows {names}. Name "
                         "yours like the book's, or say which it should match: "
                         "check_component(yours, reference=gpt.LayerNorm).",
    "unknown_reference": "The check can compare with {names}; {name} is not one of them.",
    "expected_class": "In the chapter {kind} is a class, and yours ({name}) is a function: "
                      "write it as class {kind}(nn.Module).",
    "expected_function": "generate_text_simple is a function in the chapter; {name} is a class.",
    "could_not_check": "The check could not run your code ({error}). Run your cell again, then "
                       "this one; if it persists, compare your code's structure with the chapter's.",
    "correct_component": "Correct: your {name} computes the same function as gpt.{reference}: "
                         "the same initial values; the same outputs in eval mode at the full "
                         "context length, on shorter inputs and on rows with large means; the "
                         "same gradients; and, with the same seed, the same dropout in training "
                         "mode.",
    "correct_function": "Correct: your {name} returns the same token ids as "
                        "gpt.{reference}, including when the input must be cropped.",
    "same_models": "Same function: with the reference's weights copied in, your model computes "
                   "what this {reference} computes (compared in eval mode on inputs of up to 64 "
                   "tokens, in one backward pass, and in training mode with the same seed).",
    "models_need_instances": "{name} is a class: pass built models, e.g. "
                             "compare_models(model, reference_model); check_component takes "
                             "classes.",
    "component_not_module": "Expected a torch nn.Module, got {kind}.",
    "on_meta": "This model lives on the meta device: it has shapes but no values to compare. "
               "Build it without torch.device(\"meta\").",
    "wrong_signature": "calling it as the chapter does, {signature}, fails ({error}); keep the "
                       "chapter's arguments and their names",
    "build_failed": "building it raised {error}",
    "missing_param": "no parameter {name}: the chapter's module has one of that name",
    "extra_param": "{name} (shape {shape}) has no counterpart in the chapter's module",
    "param_shape": "{name} has shape {yours}, the chapter's has {expected}",
    "ff_no_expansion": "{name} has shape {yours} where the chapter's has {expected}: the hidden "
                       "layer should be 4 times wider than emb_dim (4 * emb_dim units)",
    "renamed": "Read under other names: {names}.",
    "dropout_elsewhere": "{where}: eval mode matches, and so does training mode with every "
                         "dropout rate at 0, but not at the chapter's rates: a dropout is applied "
                         "at another place ({sites}), or draws its random numbers in another way "
                         "than nn.Dropout",
    "sites_MultiHeadAttention": "the chapter's drops attention weights, after the softmax",
    "sites_TransformerBlock": "the chapter's applies drop_shortcut to each sublayer's output, "
                              "before the shortcut adds it back",
    "sites_GPTModel": "the chapter's applies drop_emb to the summed embeddings, then the "
                      "blocks' dropouts",
    "no_dropout_at": "{where}: in training mode it applies no dropout at places where the "
                     "chapter's does ({names})",
    "dropout_extra": "{where}: in training mode it gives other outputs than in eval mode, but "
                     "the chapter's version has no dropout here; remove the dropout",
    "dropout_extra_at": "{where}: in training mode it applies dropout where the chapter's "
                        "does not ({names})",
    "no_dropout": "{where}: in training mode it applies no dropout; the chapter's does (dropout "
                  "only acts in training mode, so eval mode cannot show this)",
    "training_differs": "{where}: eval mode matches, but training mode differs even with every "
                        "dropout rate at 0; does something else depend on self.training?",
    "returns_none": "{where}: returns None; forward must return its result",
    "changes_input": "{where}: it changes its input in place (on the check's input {i} of {n}, "
                     "shape {shape}), so the caller's tensor no longer holds what it passed; "
                     "compute new tensors: x = x - y, not x -= y or x.sub_(y)",
    "changes_idx": "{where}: it changes the caller's idx in place (idx.data = ... or an in-place "
                   "operation); build a new tensor, idx = torch.cat((idx, idx_next), dim=1)",
    "right_elsewhere": "{where}: on the check's other inputs (shape {shapes}) it computes what "
                       "the chapter's computes",
    "probe_nan": "{where}: on the check's input {i} of {n} (shape {shape}) its output is NaN from "
                 "position {position} of {length} on, where the chapter's is a number",
    "random_ids": "{where}: two calls with the same model and input return different ids: it "
                  "draws random numbers, where the chapter's takes the most likely id (argmax)",
    "random_draws": "{where}: in eval mode two runs on the same input give different outputs: "
                    "it draws random numbers, and not through dropout",
    "draws_without_dropout": "{where}: in training mode it draws random numbers without calling "
                             "dropout (nn.Dropout, F.dropout, torch.dropout), so with the same "
                             "seed it drops other values than the chapter's",
    "dropout_rate": "{where}: in training mode it drops with rate {yours}; the chapter's drops "
                    "with {expected}, the rate passed to it",
    "not_parameter": "{name} is a plain tensor, not an nn.Parameter: training never changes it; "
                     "create it as nn.Parameter(...)",
    "not_buffer": "{name} is a plain tensor attribute: it is not in the state_dict and does not "
                  "move with .to(device); register it, self.register_buffer(\"name\", tensor)",
    "qkv_bias_ignored": "built with qkv_bias=True (as chapter 5 builds GPT-2 to load its "
                        "weights), it has no {names}: pass bias=qkv_bias to W_query, W_key and "
                        "W_value",
    "with_qkv_bias": "built with qkv_bias=True (as chapter 5 builds GPT-2 to load its weights):",
    "returns_none_function": "{where}: returns None; return idx, with the new ids appended",
    "input_differs": "{where} computes what the chapter's computes when given the chapter's input, "
        "so what differs is its input, made in the forward of {parent}",
    "extra_bias": "{name}: the chapter creates this layer with bias=False",
    "align_first": "the check copies the chapter's weights into yours by name, so it compares "
                   "outputs only once every parameter lines up: name them as the book does",
    "ln_eps_value": "{where}: eps is {eps}; the chapter's is 1e-5, GPT-2's value",
    "not_tensor": "{where}: returns a {kind}; it should return a tensor",
    "returns_list": "generate_text_simple returns a list; return the tensor idx, with the new "
                    "ids appended along dim=1",
    "raised": "{where}: on the check's input {i} of {n} (shape {shape}) your code raises "
        "{error}",
    "wrong_shape": "{where}: on the check's input {i} of {n} (shape {shape}) it returns shape "
                   "{yours}, expected {expected}",
    "never_called": "{where} is never called: the forward pass skips it (or reads its weights "
        "without calling it)",
    "first_difference": "in the order the forward pass runs, the first output that differs is that of "
        "{where} (largest difference {difference})",
    "first_difference_shape": "in the order the forward pass runs, the first output that "
                              "differs is that of {where}: shape {yours}, the chapter's "
                              "{expected}",
    "part_alone": "the whole agrees on the check's inputs, but {where}, run alone on inputs "
                  "of its own, does not",
    "where": "{path} ({kind})",
    "your_line": "your line {line}, in {function}: {source}",
    "initial_value": "{name} starts as {yours}; the chapter's starts as {expected} (compared before "
        "any weight is copied)",
    "initial_mask": "{name} differs from the chapter's causal mask at row {row}, column {column}: "
        "the chapter's is True exactly above the diagonal, torch.triu(..., diagonal=1)",
    "all_values": "all {value}",
    "value_range": "values from {low} to {high}",
    "shared_module": "{names} are one and the same module object, so they share their weights "
        "([block] * n repeats one block); build each with its own call, e.g. "
        "[TransformerBlock(cfg) for _ in range(n)]",
    "input_from": "{where} receives what the chapter gives to {other}: check the order of the "
        "calls in the forward of {parent}",
    "random_in_eval": "{where}: in eval mode two runs on the same input give different outputs: "
        "something random still acts (F.dropout needs training=self.training; nn.Dropout turns "
        "itself off in eval mode)",
    "two_mistakes": "{where} makes two mistakes at once:",
    "probe_gelu": "{where}: at x = -3, -2, -1, 0, 1, 2, 3 yours gives {yours}; the chapter's "
        "gives {expected}",
    "probe_norm": "{where}: with scale 1 and shift 0, the first row of its output on the check's "
        "input {i} of {n} (shape {shape}) has mean {mean} and variance {var}; the "
        "chapter's has mean 0 and variance {expected_var}",
    "probe_ids": "{where}: on the check's input {i} of {n} (shape {shape}) the new ids first "
        "differ at step {step} of row {row}: yours {yours}, the chapter's {expected}",
    "probe_keys": "{where}: query {query} draws on keys {yours}, the chapter's on keys "
        "{expected} (found by changing the input at one position at a time)",
    "probe_position": "{where}: on the check's input {i} of {n} (shape {shape}) the first position "
        "whose output differs is {position} of {length} (largest difference "
        "{difference})",
    "probe_values": "{where}: on the check's input {i} of {n} (shape {shape}) the first value that "
        "differs is at index {index}: yours {yours}, the chapter's {expected}",
    "no_gradient": "the outputs agree, but after one backward pass no gradient reaches {names}, "
        "where the chapter's gets one: look for .data, .detach() or torch.no_grad() in "
        "forward",
    "gradient_differs": "the outputs agree, but after one backward pass the gradients of {names} "
        "differ from the chapter's: look for .data or .detach() on part of the "
        "computation",
    "the_input": "the input",
    "several_mistakes": "{where} behaves like {n} mistakes at once on these inputs:",
    # diagnoses: each one found by planting that mistake in the chapter's code
    "ln_unbiased": "{where}: it uses the unbiased variance (dividing by n - 1); layer norm "
                   "divides by n: x.var(dim=-1, keepdim=True, unbiased=False)",
    "ln_eps_outside": "{where}: eps is added outside the square root; the chapter adds it to "
                      "the variance, torch.sqrt(var + self.eps)",
    "ln_no_eps": "{where}: eps is missing; without it a row of equal values divides by 0",
    "ln_no_sqrt": "{where}: it divides by the variance, not by its square root (the standard "
                  "deviation)",
    "ln_no_centering": "{where}: it does not subtract the mean before dividing",
    "ln_wrong_axis": "{where}: it normalizes over the tokens (dim=-2), not over each token's "
                     "features (dim=-1)",
    "ln_no_affine": "{where}: it never applies scale and shift; return self.scale * norm_x + "
                    "self.shift",
    "gelu_erf": "Note: this is the exact GELU, x·Φ(x) with erf (nn.GELU()'s default); the "
        "chapter uses the tanh approximation GPT-2 was trained with. The two differ by "
        "less than 0.001, but the book's printed numbers need the tanh form, "
        "nn.GELU(approximate=\"tanh\").",
    "gelu_relu": "{where}: this is ReLU, max(0, x); GELU is smooth and slightly negative for "
                 "negative inputs",
    "gelu_constant": "{where}: the constant inside tanh should be sqrt(2 / pi), not 2 / pi",
    "gelu_no_half": "{where}: the factor 0.5 in front is missing",
    "ff_relu": "{where}: it uses ReLU between the two layers; the chapter uses GELU",
    "ff_no_activation": "{where}: there is no activation between the two linear layers, so "
                        "they collapse into one linear map",
    "no_mask": "{where}: there is no causal mask, so each token also attends to later tokens",
    "mask_includes_diagonal": "{where}: the mask also hides each token from itself (diagonal=0); "
                              "the first token is then left with nothing to attend to (NaN). "
                              "Use torch.triu(..., diagonal=1)",
    "mask_leaks_one": "{where}: the mask is off by one: each token also sees the next one "
                      "(diagonal=2); use diagonal=1",
    "mask_not_cut": "{where}: it works at the full context length but fails on shorter "
                    "inputs: cut the mask to the input, self.mask[:num_tokens, :num_tokens]",
    "mask_after_softmax": "{where}: the mask is applied after the softmax, so the remaining "
                          "weights no longer sum to 1; fill the scores with -inf before it",
    "no_scaling": "{where}: the scores are not divided by sqrt(head_dim) before the softmax",
    "scale_d_out": "{where}: the scores are divided by sqrt(d_out); each head's dot products "
                   "have head_dim terms, so divide by sqrt(head_dim) = self.head_dim**0.5",
    "scale_d_in": "{where}: the scores are divided by sqrt(d_in), the input's width; each "
                  "head's dot products have head_dim terms: divide by self.head_dim**0.5",
    "scale_no_sqrt": "{where}: the scores are divided by head_dim; divide by its square root, "
                     "self.head_dim**0.5",
    "softmax_wrong_axis": "{where}: the softmax runs over the queries (dim=-2); each query's "
                          "weights over the keys must sum to 1: dim=-1",
    "softmax_heads_axis": "{where}: the softmax runs over the heads (dim=1); use dim=-1, the "
                          "keys",
    "softmax_batch_axis": "{where}: the softmax runs over the batch (dim=0); use dim=-1, the "
                          "keys",
    "split_strided": "{where}: each head takes every num_heads-th feature (view(b, num_tokens, "
                     "head_dim, num_heads)); a head is a block of head_dim neighbouring features: "
                     "view(b, num_tokens, num_heads, head_dim), then .transpose(1, 2)",
    "split_no_transpose": "{where}: the heads are split with view(b, num_heads, num_tokens, "
                          "head_dim) alone, which mixes tokens and heads; view as (b, num_tokens, "
                          "num_heads, head_dim), then .transpose(1, 2)",
    "merge_no_transpose": "{where}: the heads are merged without transposing back: "
                          "(attn_weights @ values).transpose(1, 2) before .contiguous().view(...)",
    "no_out_proj": "{where}: the output projection is missing: return self.out_proj(context)",
    "post_ln": "{where}: it normalizes after the shortcut (post-LN, the original Transformer); "
               "GPT-2 normalizes each sublayer's input inside the shortcut: x + "
               "att(norm1(x))",
    "shortcut_after_norm": "{where}: the shortcut starts from the normalized x; keep the "
                           "block's input: shortcut = x before x = self.norm1(x)",
    "no_att_shortcut": "{where}: the shortcut around the attention sublayer is missing",
    "no_ff_shortcut": "{where}: the shortcut around the feed-forward sublayer is missing",
    "doubled_att_shortcut": "{where}: the input is added twice around the attention sublayer",
    "doubled_ff_shortcut": "{where}: the input is added twice around the feed-forward sublayer",
    "stale_shortcut": "{where}: the feed-forward's shortcut adds the block's input, not the "
                      "attention sublayer's result: set shortcut = x again before the second "
                      "sublayer",
    "one_norm": "{where}: norm1 is used for both sublayers; the feed-forward's input goes "
                "through norm2",
    "no_final_norm": "{where}: the final layer norm is missing: x = self.final_norm(x) before "
                     "the output head",
    "pos_from_ids": "{where}: the positions are looked up with the token ids; use the positions "
                    "0 .. seq_len - 1, torch.arange(seq_len, device=in_idx.device)",
    "no_positions": "{where}: no position embeddings are added to the token embeddings",
    "tied_head": "{where}: the output head reuses the token embedding matrix (weight tying); "
                 "the chapter's out_head has its own weights",
    "softmax_output": "{where}: it returns probabilities; the model returns logits (the "
                      "softmax comes later, in generation or in the loss)",
    "no_crop": "{where}: the input is not cropped: when idx grows past context_size, pass only "
               "the last context_size ids, idx[:, -context_size:]",
    "crop_first": "{where}: it keeps the first context_size ids; keep the last ones, "
                  "idx[:, -context_size:]",
    "first_position": "{where}: it picks the next token from the first position's logits; the "
                      "last position predicts the next token: logits[:, -1, :]",
    "argmax_wrong_axis": "{where}: the argmax runs over the batch (dim=0); take it over the "
                         "vocabulary, dim=-1",
}
