CHINESE = {
    # every exercise
    "not_quite": "还不对：",
    "several": "这个值可能来自 {n} 种错误。",
    "numbered": "（{i}）{text}。",
    "sep_sentences": "",
    "sep_field": "：",
    "sep_names": "、",
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
    "no_more_hints": "没有更多提示了：请把你的答案与 zh/solutions/solution_{exercise}.ipynb 对照。",
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
                  "填入表中这个规模的 emb_dim、n_layers 和 n_heads。在 with "
                  "torch.device('meta'): 中构建每个模型，这样每个参数都有真实的形状，"
                  "却不分配内存。",
    "hint_4_2_2": "total_params 是模型每个参数张量的元素个数之和。tied_params 不计 model.out_head "
                  "的权重，也就是权重共享时与 model.tok_emb 共用的那个矩阵。size_mb：一个 float32 "
                  "数占 4 个字节，这里的 MB 指字节数 / 1024**2。",
    # exercise 4.3
    "not_attempted_4_3": "尚未作答：补全两个构造函数，把每个部件赋给 self，再用 CONFIG_4_3 构建 "
                         "model，然后重新运行这个单元格。",
    "pass_instance": "请传入构建好的模型（一个实例，例如 YourModel(cfg)），而不是类",
    "is_config": "这是一个配置；请用它构建模型，再传入模型",
    "not_module": "需要一个 torch 的 nn.Module，得到的却是 {kind}",
    "site_missing": "不是 nn.Dropout（请沿用 gpt.py 中的模块名称，检查才能找到它）",
    "no_blocks": "应当是一个由块组成的非空 nn.Sequential（请沿用 gpt.py 中的模块名称）",
    "one_rate": "各处 dropout 用的都是同一个 dropout 率：创建每一处时，都要从配置中读取它自己的那一项",
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
                  "dropout 参数作为 dropout 率，创建自己的 dropout。"
                  "你的两个类要像 gpt.py 中的对应类那样，按同样的顺序创建同样的部件；"
                  "要改的只是它们读取的 dropout 率。",
    "hint_4_3_2": "在你的块中，MultiHeadAttention 的 dropout 参数取注意力权重的 dropout 率，"
                  "drop_shortcut 取快捷连接的 dropout 率；在你的模型中，drop_emb 取嵌入的 dropout "
                  "率，trf_blocks 堆叠 cfg['n_layers'] 个你的块（而不是读取 drop_rate 的 "
                  "gpt.TransformerBlock）。",
    # check_component 与 compare_models（exercises/components.py）
    "not_attempted_component": "尚未作答：你的代码仍会引发 NotImplementedError。"
                               "请补全待填写的代码，然后重新运行这个单元格。",
    "pass_class": "请传入类本身，例如 check_component({kind})，而不是构建好的 {kind}；"
                  "要比较两个构建好的模型，请使用 compare_models(yours, reference)。",
    "not_component": "需要本章的某个类或 generate_text_simple，得到的却是 {kind}。",
    "unknown_component": "本章没有名为 {name} 的组件；检查认识的组件有 {names}。"
                         "请像原书那样给你的组件命名，或者指明它应当与哪个组件对照："
                         "check_component(yours, reference=gpt.LayerNorm)。",
    "unknown_reference": "检查能对照的有 {names}；{name} 不在其中。",
    "expected_class": "本章中的 {kind} 是一个类，而你的 {name} 是一个函数：请把它写成 class {kind}(nn.Module)。",
    "expected_function": "generate_text_simple 在本章中是一个函数，{name} 却是一个类。",
    "could_not_check": "检查无法运行你的代码（{error}）。请先重新运行你的代码所在的单元格，"
                       "再运行这个单元格；如果问题依旧，请把你的代码结构与本章的对照。",
    "correct_component": "正确：你的 {name} 与 gpt.{reference} 的计算结果相同：初始值相同；"
                         "在评估模式下，无论输入是完整的上下文长度、较短的输入，还是均值很大的行，"
                         "输出都相同；梯度相同；随机种子相同时，训练模式下的 dropout 也相同。",
    "correct_function": "正确：你的 {name} 返回的词元 ID 与 gpt.{reference} 相同，"
                        "输入需要裁剪时也是如此。",
    "same_models": "计算结果相同：把参照模型的权重复制进来后，你的模型与这个 {reference} "
                   "算出的结果一致（在评估模式下用最多 64 个词元的输入比较，做了一次反向传播，"
                   "并在训练模式下用相同的随机种子比较）。",
    "models_need_instances": "{name} 是一个类：请传入构建好的模型，例如 compare_models(model, "
                             "reference_model)；接受类的是 check_component。",
    "component_not_module": "需要一个 torch 的 nn.Module，得到的却是 {kind}。",
    "on_meta": "这个模型在 meta 设备上：它只有形状，没有可供比较的值。构建它时请不要使用 "
               "torch.device(\"meta\")。",
    "wrong_signature": "按本章的方式调用它，即 {signature}，会出错（{error}）；"
                       "请保留本章的参数及其名称",
    "build_failed": "构建它时引发了 {error}",
    "missing_param": "缺少参数 {name}：本章的模块有一个同名参数",
    "extra_param": "{name}（形状为 {shape}）在本章的模块中没有对应的参数",
    "param_shape": "{name} 的形状是 {yours}，本章的是 {expected}",
    "ff_no_expansion": "{name} 的形状是 {yours}，而本章的是 {expected}：隐藏层的宽度应当是 "
                       "emb_dim 的 4 倍（4 * emb_dim 个神经元）",
    "renamed": "按其他名称读取的参数：{names}。",
    "dropout_elsewhere": "{where}：评估模式下一致，所有 dropout 率都为 0 时训练模式下也一致，但用本章的 "
                         "dropout 率时不一致：有一个 dropout 用在了别的位置（{sites}），或者它"
                         "抽取随机数的方式与 nn.Dropout 不同",
    "sites_MultiHeadAttention": "本章的版本在 softmax 之后对注意力权重应用 dropout",
    "sites_TransformerBlock": "本章的版本对每个子层的输出应用 drop_shortcut，然后再由快捷连接"
                              "把输入加回来",
    "sites_GPTModel": "本章的版本先对相加后的嵌入应用 drop_emb，然后是各个块中的 dropout",
    "no_dropout_at": "{where}：在训练模式下，本章版本应用了 dropout 的某些位置（{names}），它却没有应用",
    "dropout_extra": "{where}：它在训练模式下的输出与评估模式下不同，但本章的版本在这里没有 "
                     "dropout；请去掉这个 dropout",
    "dropout_extra_at": "{where}：在训练模式下，本章版本没有 dropout 的位置（{names}），它却应用了 dropout",
    "no_dropout": "{where}：在训练模式下它没有应用 dropout，而本章的版本应用了（dropout "
                  "只在训练模式下起作用，所以评估模式看不出这一点）",
    "training_differs": "{where}：评估模式下一致，但即使所有 dropout 率都为 0，"
                        "训练模式下仍不一致；是否还有别的部分依赖 self.training？",
    "returns_none": "{where}：返回了 None；forward 必须返回它的结果",
    "changes_input": "{where}：它原地修改了自己的输入（在检查的第 {i} 个输入上，共 {n} 个，形状为 {shape}），调用者的张量因此不再是它传入的值；请计算新的张量：写 x = x - y，而不是 x -= y 或 x.sub_(y)",
    "changes_idx": "{where}：它原地修改了调用者的 idx（idx.data = ... 或原地运算）；请构建一个新张量，即 idx = torch.cat((idx, idx_next), dim=1)",
    "right_elsewhere": "{where}：在检查的其他输入（形状为 {shapes}）上，它的计算结果与本章的相同",
    "probe_nan": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shape}），从第 {position} 个位置起（共 {length} 个位置）它的输出是 NaN，而本章的输出是数值",
    "random_ids": "{where}：用同一个模型和同一个输入调用两次，返回的 ID 却不同：它抽取了随机数，而本章的版本取可能性最大的 ID（argmax）",
    "random_draws": "{where}：在评估模式下，同一个输入运行两次，输出却不同：它抽取了随机数，而且不是通过 dropout",
    "draws_without_dropout": "{where}：在训练模式下，它不调用 dropout（nn.Dropout、F.dropout、torch.dropout）就抽取了随机数，所以随机种子相同时，它丢弃的值与本章的不同",
    "dropout_rate": "{where}：在训练模式下，它的 dropout 率是 {yours}；本章的是 {expected}，即传给它的 dropout 率",
    "not_parameter": "{name} 是一个普通张量，不是 nn.Parameter：训练永远不会改变它；请把它创建为 nn.Parameter(...)",
    "not_buffer": "{name} 是一个普通的张量属性：它不在 state_dict 中，也不会随 .to(device) 移动；请注册它，即 self.register_buffer(\"name\", tensor)",
    "qkv_bias_ignored": "用 qkv_bias=True 构建时（第 5 章加载 GPT-2 的权重时就是这样构建的），它没有 {names}：请把 bias=qkv_bias 传给 W_query、W_key 和 W_value",
    "with_qkv_bias": "用 qkv_bias=True 构建时（第 5 章加载 GPT-2 的权重时就是这样构建的）：",
    "returns_none_function": "{where}：返回了 None；请返回追加了新 ID 的 idx",
    "input_differs": "把本章版本的输入交给 {where} 时，结果与本章版本相同；可见问题出在它收到"
        "的输入，这个输入由 {parent} 的 forward 产生",
    "extra_bias": "{name}：本章创建这一层时用的是 bias=False",
    "align_first": "检查按名字把本章的权重复制到你的模块中，所以只有当每个参数都对得上时才会"
                   "比较输出：请像原书那样给参数命名",
    "ln_eps_value": "{where}：eps 是 {eps}；本章的是 1e-5，即 GPT-2 所用的值",
    "not_tensor": "{where}：返回了一个 {kind}；它应当返回张量",
    "returns_list": "generate_text_simple 返回了一个列表；请返回张量 idx，新的词元 ID 沿 dim=1 "
                    "追加在它的后面",
    "raised": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shap"
        "e}），你的代码引发了 {error}",
    "wrong_shape": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shape}），它返回的形状是 "
                   "{yours}，应当是 {expected}",
    "never_called": "{where} 从未被调用：前向传播跳过了它（或者只读取了它的权重而没有调用它）",
    "first_difference": "按前向传播的执行顺序，第一个不一致的输出来自 {where}（最大差值为 {di"
        "fference}）",
    "first_difference_shape": "按前向传播的执行顺序，第一个不一致的输出来自 {where}：形状为 "
                              "{yours}，本章的为 {expected}",
    "part_alone": "在检查的输入上整体一致，但单独用它自己的输入运行时，{where} 不一致",
    "where": "{path}（{kind}）",
    "your_line": "出错的是你的代码第 {line} 行，在 {function} 中：{source}",
    "initial_value": "{name} 的初始值{yours}；本章的初始值{expected}（在复制任何权重之前比较）",
    "initial_mask": "{name} 与本章的因果掩码在第 {row} 行、第 {column} 列不同"
        "：本章的掩码恰好在对角线以上为 True，即 torch.triu(..., d"
        "iagonal=1)",
    "all_values": "全部为 {value}",
    "value_range": "在 {low} 到 {high} 之间",
    "shared_module": "{names} 是同一个模块对象，因此共用权重（[block] * n 把同一个"
        "块重复了 n 次）；请分别构建每一个，例如 [TransformerBlock("
        "cfg) for _ in range(n)]",
    "input_from": "{where} 收到的是本章交给 {other} 的输入：请检查 {parent"
        "} 的 forward 中各调用的顺序",
    "random_in_eval": "{where}：在评估模式下，同一个输入运行两次，输出却不同：仍有随机的部分在起作用"
        "（F.dropout 需要 training=self.training；nn.Dropout 在评估模式下会自行关闭）",
    "two_mistakes": "{where} 同时犯了两个错误：",
    "probe_gelu": "{where}：在 x = -3、-2、-1、0、1、2、3 处，你"
        "的结果是 {yours}；本章的是 {expected}",
    "probe_norm": "{where}：scale 为 1、shift 为 0 时，在检查的第 {i} "
        "个输入上（共 {n} 个，形状为 {shape}），输出第一行的均值为 {mea"
        "n}，方差为 {var}；本章的均值为 0，方差为 {expected_var}",
    "probe_ids": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shap"
        "e}），新词元 ID 第一次不同出现在第 {row} 行的第 {step} 步："
        "你的是 {yours}，本章的是 {expected}",
    "probe_keys": "{where}：查询 {query} 用到了键 {yours}，本章的用到了键 {"
        "expected}（每次只改变输入的一个位置得出）",
    "probe_position": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shap"
        "e}），输出第一个不一致的位置是 {position}（共 {length} 个"
        "位置，最大差值为 {difference}）",
    "probe_values": "{where}：在检查的第 {i} 个输入上（共 {n} 个，形状为 {shap"
        "e}），第一个不一致的值在索引 {index} 处：你的是 {yours}，本章"
        "的是 {expected}",
    "no_gradient": "输出一致，但一次反向传播之后，梯度没有传到 {names}，而本章的版本能传到："
        "请在 forward 中查找 .data、.detach() 或 torch.n"
        "o_grad()",
    "gradient_differs": "输出一致，但一次反向传播之后，{names} 的梯度与本章的不同：请查找计算中用"
        "了 .data 或 .detach() 的部分",
    "the_input": "输入",
    "several_mistakes": "在这些输入上，{where} 的表现同时符合 {n} 种错误：",
    # 诊断：每一种都由把该错误植入本章代码得到
    "ln_unbiased": "{where}：它用的是无偏方差（除以 n - 1）；层归一化除以 n：x.var(dim=-1, "
                   "keepdim=True, unbiased=False)",
    "ln_eps_outside": "{where}：eps 加在了平方根外面；本章把它加到方差上，即 torch.sqrt(var + "
                      "self.eps)",
    "ln_no_eps": "{where}：缺少 eps；没有它，一行中的值全部相等时，归一化会除以 0",
    "ln_no_sqrt": "{where}：它除以的是方差，而不是方差的平方根（标准差）",
    "ln_no_centering": "{where}：它在相除之前没有减去均值",
    "ln_wrong_axis": "{where}：它沿词元归一化（dim=-2），而不是沿每个词元的特征归一化（dim=-1）",
    "ln_no_affine": "{where}：它没有应用 scale 和 shift；请返回 self.scale * norm_x + self.shift",
    "gelu_erf": "注意：这是精确的 GELU，即用 erf 计算的 x·Φ(x)（nn.GELU("
        ") 的默认形式）；本章使用的是 GPT-2 训练时所用的 tanh 近似。两者相"
        "差不到 0.001，但要得到原书印出的数值，需要用 tanh 形式，即 nn.G"
        "ELU(approximate=\"tanh\")。",
    "gelu_relu": "{where}：这是 ReLU，即 max(0, x)；GELU 是平滑的，输入为负时取略小于 0 的值",
    "gelu_constant": "{where}：tanh 中的常数应当是 sqrt(2 / pi)，而不是 2 / pi",
    "gelu_no_half": "{where}：缺少前面的系数 0.5",
    "ff_relu": "{where}：它在两层之间用的是 ReLU；本章用的是 GELU",
    "ff_no_activation": "{where}：两个线性层之间没有激活函数，所以它们退化为一个线性映射",
    "no_mask": "{where}：没有因果掩码，所以每个词元也会关注它后面的词元",
    "mask_includes_diagonal": "{where}：掩码把每个词元自身也遮住了（diagonal=0）；"
                              "这样第一个词元就没有任何可关注的词元（结果为 NaN）。请使用 "
                              "torch.triu(..., diagonal=1)",
    "mask_leaks_one": "{where}：掩码错了一位：每个词元还能看到下一个词元（diagonal=2）；请使用 "
                      "diagonal=1",
    "mask_not_cut": "{where}：它在完整的上下文长度下能正常运行，在较短的输入上却会出错："
                    "请把掩码截取到输入的长度，即 self.mask[:num_tokens, :num_tokens]",
    "mask_after_softmax": "{where}：掩码是在 softmax 之后应用的，所以剩下的权重之和不再是 1；请在 "
                          "softmax 之前用 -inf 填充注意力分数",
    "no_scaling": "{where}：softmax 之前没有把注意力分数除以 sqrt(head_dim)",
    "scale_d_out": "{where}：注意力分数除以的是 sqrt(d_out)；每个头的点积只有 head_dim 项，"
                   "所以应当除以 sqrt(head_dim) = self.head_dim**0.5",
    "scale_d_in": "{where}：注意力分数除以的是 sqrt(d_in)，即输入的宽度；每个头的点积只有 head_dim 项：应当除以 self.head_dim**0.5",
    "scale_no_sqrt": "{where}：注意力分数除以的是 head_dim；应当除以它的平方根，即 "
                     "self.head_dim**0.5",
    "softmax_wrong_axis": "{where}：softmax 是沿查询计算的（dim=-2）；"
                          "每个查询对各个键的权重之和必须为 1：dim=-1",
    "softmax_heads_axis": "{where}：softmax 是沿头计算的（dim=1）；请使用 dim=-1，即沿键计算",
    "softmax_batch_axis": "{where}：softmax 是沿批次计算的（dim=0）；请使用 dim=-1，即沿键计算",
    "split_strided": "{where}：每个头取的是每隔 num_heads 个的特征（view(b, num_tokens, head_dim, num_heads)）；一个头应当是 head_dim 个相邻的特征：先 view 成 (b, num_tokens, num_heads, head_dim)，再做 .transpose(1, 2)",
    "split_no_transpose": "{where}：拆分头时只用了 view(b, num_heads, num_tokens, head_dim)，"
                          "这会把词元和头混在一起；请先 view 成 (b, num_tokens, num_heads, "
                          "head_dim)，再做 .transpose(1, 2)",
    "merge_no_transpose": "{where}：合并头时没有先转置回来：在 .contiguous().view(...) 之前先做 "
                          "(attn_weights @ values).transpose(1, 2)",
    "no_out_proj": "{where}：缺少输出投影：请返回 self.out_proj(context)",
    "post_ln": "{where}：它在快捷连接之后才归一化（后置层归一化，即原始 Transformer 的做法）；"
               "GPT-2 在快捷连接内部对每个子层的输入归一化：x + att(norm1(x))",
    "shortcut_after_norm": "{where}：快捷连接从归一化之后的 x 开始；应当保留块的输入：在 x = "
                           "self.norm1(x) 之前写 shortcut = x",
    "no_att_shortcut": "{where}：缺少绕过注意力子层的快捷连接",
    "no_ff_shortcut": "{where}：缺少绕过前馈子层的快捷连接",
    "doubled_att_shortcut": "{where}：注意力子层的快捷连接把输入加了两次",
    "doubled_ff_shortcut": "{where}：前馈子层的快捷连接把输入加了两次",
    "stale_shortcut": "{where}：前馈子层的快捷连接加回的是块的输入，而不是注意力子层的结果：在第二个子层之前重新写 shortcut = x",
    "one_norm": "{where}：两个子层都用了 norm1；前馈子层的输入应当经过 norm2",
    "no_final_norm": "{where}：缺少最终层归一化：在输出层之前写 x = self.final_norm(x)",
    "pos_from_ids": "{where}：查找位置嵌入时用的是词元 ID；应当用位置 0 到 seq_len - 1，即 "
                    "torch.arange(seq_len, device=in_idx.device)",
    "no_positions": "{where}：词元嵌入上没有加上位置嵌入",
    "tied_head": "{where}：输出层复用了词元嵌入矩阵（权重共享）；本章的 out_head 有自己的权重",
    "softmax_output": "{where}：它返回的是概率；模型应当返回 logits（softmax "
                      "要到之后的生成或损失计算中才用到）",
    "no_crop": "{where}：输入没有裁剪：当 idx 的长度超过 context_size 时，只传入最后 context_size "
               "个词元 ID，即 idx[:, -context_size:]",
    "crop_first": "{where}：它保留的是前 context_size 个词元 ID；应当保留最后的那些，即 idx[:, "
                  "-context_size:]",
    "first_position": "{where}：它根据第一个位置的 logits 选出下一个词元；"
                      "预测下一个词元的是最后一个位置：logits[:, -1, :]",
    "argmax_wrong_axis": "{where}：argmax 是沿批次计算的（dim=0）；应当沿词汇表计算，即 dim=-1",
}
