"""Every text the exercise checks show, one table per language: MESSAGES[language][code].

A language is added as a new table with the same codes and the same {placeholders} (a test
compares them); exercises.checks.set_language(language) switches to it. Identifiers and code in
the texts (nn.Linear, size_mb, 1024**2) stay as they are in every language.
"""

MESSAGES = {"en": {
    # every exercise
    "not_quite": "Not quite:",
    "several": "this value fits {n} mistakes.",
    "numbered": "({i}) {text}.",
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
}, "zh": {
    # every exercise
    "not_quite": "还不对：",
    "several": "这个值可能来自 {n} 种错误。",
    "numbered": "（{i}）{text}。",
    "could_not_read": "检查无法读取这个答案（{error}）；请对照起始代码检查它的写法，"
                      "然后重新运行这个单元格。",
    "config_changed": "警告：gpt.GPT_CONFIG_124M 被原地修改了（{keys}），在本次会话中，"
                      "之后读取它的所有代码都会看到这个改动。请把新的配置建成副本，即 "
                      "{{**gpt.GPT_CONFIG_124M, ...}}，并重启内核，恢复原来的配置。",
    "not_filled": "还没有填写",
    "not_a_number": "应当是一个数，得到的却是 {kind}",
    "not_whole": "应当是整数（int），得到的却是带小数部分的 float",
    "not_scalar": "应当是一个数，得到的却是形状为 {shape} 的张量",
    "meta_tensor": "meta 设备上的张量只有形状，没有值；请用 Python 的 int 计算这个数（numel() "
                   "返回的就是 int）",
    "not_a_dict": "应当是 dict，得到的却是 {kind}",
    "swapped": "{a} 和 {b} 填反了",
    "hint": "提示 {n}/{total}：{text}",
    "hint_more": "（再运行一次这个单元格，可以看到更具体的提示。）",
    "no_more_hints": "没有更多提示了：请把你的答案与 solutions/solution_{exercise}.ipynb 对照。",
    "hint_repr": "hint_{exercise}：要看提示，请调用它，写成 hint_{exercise}()",
    # exercise 4.1
    "not_attempted_4_1": "尚未作答：把 ff_params 和 att_params 设为你数出的参数量，"
                         "然后重新运行这个单元格。",
    "biases": "偏置不对：这里的每个 nn.Linear 都为每个输出单元配一个偏置，只有 W_query、W_key 和 "
              "W_value 例外（qkv_bias 为 False）",
    "missing_layer": "漏了一层：print() 为这个模块列出的每个 nn.Linear 都要计入",
    "mask_counted": "把因果掩码也算进去了：它是缓冲区，不是可训练参数（要数 parameters()，而不是 "
                    "state_dict）",
    "heads_share": "各个头没有自己的权重：全部 {n_heads} 个头共用 W_query、W_key、W_value 和 "
                   "out_proj，每个头只使用其中 head_dim = {head_dim} 列",
    "all_blocks": "这是全部 {n_layers} 个块加在一起的参数量；只数单个块中的这个模块",
    "whole_block": "这是整个 Transformer 块的参数量；只数这一个模块",
    "other_module": "这是另一个模块的参数量",
    "wrong_count_4_1": "参数量不对（必须完全一致）；把模块中每个 nn.Linear 的权重和偏置加起来",
    "correct_4_1": "正确：两个参数量都完全一致。现在解释一下，"
                   "为什么一个模块的参数量约为另一个的两倍。",
    "hint_4_1_1": "两个模块都由 nn.Linear 层组成；GELU、dropout 和因果掩码都没有可训练参数。"
                  "print(block.ff) 和 print(block.att) 会列出每一层的 in_features、out_features "
                  "以及它有没有偏置。",
    "hint_4_1_2": "一个 nn.Linear(n_in, n_out) 含有一个 n_out x n_in 的权重矩阵和 n_out 个偏置，"
                  "除非创建时指定了 bias=False。逐层把这些加起来。用 PyTorch 验证："
                  "module.parameters() 逐个给出每个权重张量和偏置张量，张量的 numel() "
                  "就是它的元素个数。",
    # exercise 4.2
    "not_attempted_4_2": "尚未作答：填好配置和结果，然后重新运行这个单元格。",
    "missing_names": "缺少 {names} 的条目（名称应为 {expected}）",
    "unknown_names": "{names} 不是 {expected} 中的名称",
    "config_keys": "它的键与 GPT_CONFIG_124M 的键不同（{keys}）；请从 GPT_CONFIG_124M 的副本开始",
    "base_changed": "{keys} 被改动了；不同规模之间只有 emb_dim、n_layers 和 n_heads 不同",
    "size_value_off": "不是这个规模的值；请从四种规模的表格中查取",
    "unknown_keys": "未知的键 {keys}；键应为 {expected}",
    "head_left_out": "漏掉了输出层；total_params 要计入所有参数",
    "not_from_config": "模型是用 GPT-2 small 的 {fields} 构建的：请用这个规模自己的配置来构建",
    "qkv_biases": "算上了查询、键和值的偏置；本练习和 GPT_CONFIG_124M 一样，qkv_bias 为 False",
    "other_size": "这是 {other} 的数值",
    "wrong_total": "参数量不对（必须完全一致）；把模型所有参数的 numel() 加起来",
    "head_counted": "仍然计入了输出层；权重共享时，输出层复用词元嵌入的矩阵，所以不要计入它的参数",
    "both_vocab": "两个词汇表大小的矩阵都减掉了；权重共享让 tok_emb 和 out_head 共用一个矩阵，"
                  "所以它只算一次",
    "pos_subtracted": "位置嵌入也被减掉了；与词元嵌入共享权重的只有输出层",
    "follows_total": "它由 total_params 算出，请先改正 total_params",
    "wrong_tied": "参数量不对（必须完全一致）；从总参数量中减去输出层的参数",
    "mb_rounding": "舍入得太粗；请保留两位小数（与正确值相差不超过 {mb_tolerance} MB 都算通过），"
                   "例如 round(size_mb, 2)",
    "mb_unit": "单位不是 MB：这里的 MB 指字节数 / 1024**2（不是字节、KB 或 GB，也不是字节数 / "
               "1000**2）",
    "mb_bytes_per_param": "每个参数的字节数不对：一个 float32 数占 4 个字节",
    "mb_from_tied": "这是用 tied_params 算的；实际构建的模型存储了全部参数，包括输出层",
    "wrong_size": "大小不对；float32 的每个参数占 4 个字节，MB 指字节数 / 1024**2，"
                  "与正确值相差不超过 {mb_tolerance} MB 都算通过",
    "correct_4_2": "正确：每种规模都对（参数量完全一致，size_mb 与正确值相差不超过 {mb_tolerance} "
                   "MB）。留意输出层在 medium 的总参数量中占多大比例，在 XL 中又小了多少。",
    "hint_4_2_1": "每种规模都需要自己的配置：复制一份 gpt.GPT_CONFIG_124M（不要改动原来的那个），"
                  "填入表中这个规模的 emb_dim、n_layers 和 n_heads。在 `with "
                  "torch.device('meta'):` 中构建每个模型，这样每个参数都有真实的形状，"
                  "却不分配内存。",
    "hint_4_2_2": "total_params 是模型每个参数张量的元素个数之和。tied_params 不计 model.out_head "
                  "的权重，也就是权重共享时与 model.tok_emb 共用的那个矩阵。size_mb：一个 float32 "
                  "数占 4 个字节，这里的 MB 指字节数 / 1024**2。",
    # exercise 4.3
    "not_attempted_4_3": "尚未作答：补全两个构造函数，把每个部件赋给 self，再用 CONFIG_4_3 构建 "
                         "`model`，然后重新运行这个单元格。",
    "pass_instance": "请传入构建好的模型（一个实例，例如 YourModel(cfg)），而不是类",
    "is_config": "这是一个配置；请用它构建模型，再传入模型",
    "not_module": "需要一个 torch 的 nn.Module，得到的却是 {kind}",
    "site_missing": "不是 nn.Dropout（请沿用 gpt.py 中的模块名称，检查才能找到它）",
    "no_blocks": "应当是一个由块组成的非空 nn.Sequential（请沿用 gpt.py 中的模块名称）",
    "one_rate": "所有 dropout 的 dropout 率都相同：每个 dropout 都要用配置中属于它自己的 dropout "
                "率来创建",
    "differs_between_blocks": "各个块的 dropout 率不一样：trf_blocks "
                              "中的所有块都是由同一个类构建的吗？",
    "rate_of_other_site": "用的是 {key} 给出的 dropout 率；这个 dropout 应当读取 {own}",
    "rate_unknown": "它的 dropout 率不是配置中三个 dropout 率中的任何一个（比较时的容差为 "
                    "{rate_tolerance}）",
    "unverified_meta": "无法在 meta 设备上验证：三个 dropout 率都在正确的地方，"
                       "但没有数据的模型无法运行，所以检查看不到 forward 是否用到了它们。请在 CPU "
                       "上构建模型（它很小），然后重新运行这个单元格。",
    "forward_failed": "在两个词元上运行模型时出错（{error}）",
    "never_applied": "在 forward 中从未用到",
    "correct_4_3": "正确：三处 dropout 各有自己的 dropout 率，而且 forward 每一处都用到了。",
    "hint_4_3_1": "dropout 由三个构造函数创建：gpt.GPTModel 的构造函数创建 drop_emb，"
                  "gpt.TransformerBlock 的创建 drop_shortcut，gpt.MultiHeadAttention 则用传给它的 "
                  "`dropout` 参数作为 dropout 率，创建自己的 dropout。"
                  "你的两个类创建的部件和创建顺序都与 gpt.py 中的对应类相同；变的只是它们读取的 "
                  "dropout 率。",
    "hint_4_3_2": "在你的块中，MultiHeadAttention 的 `dropout` 参数取注意力权重的 dropout 率，"
                  "drop_shortcut 取快捷连接的 dropout 率；在你的模型中，drop_emb 取嵌入的 dropout "
                  "率，trf_blocks 堆叠 cfg['n_layers'] 个你的块（而不是读取 drop_rate 的 "
                  "gpt.TransformerBlock）。",
}}
