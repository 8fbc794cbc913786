class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument prints a single line instead of usage + error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def non_negative_int(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def main(argv=None):
    """Command line: build an (untrained) GPT-2 and greedily continue a prompt."""
    parser = _OneLineParser(prog="gpt.py", description=main.__doc__)
    parser.add_argument("--prompt", default="Hello, I am", help="text to continue")
    parser.add_argument("--max-new-tokens", type=non_negative_int, default=6, metavar="N")
    parser.add_argument("--seed", type=int, default=123, help="torch.manual_seed before building")
    parser.add_argument("--model", choices=list(GPT2_SIZES), default="gpt2-small")
    args = parser.parse_args(argv)

    try:
        tokenizer = get_tokenizer()
        encoded = text_to_token_ids(args.prompt, tokenizer)
        cfg = gpt2_config(args.model)
        if encoded.shape[1] > cfg["context_length"]:
            raise ValueError(f"prompt has {encoded.shape[1]} tokens; the limit is {cfg['context_length']}")
        torch.manual_seed(args.seed)
        model = GPTModel(cfg)
        model.eval()  # disable dropout
        out = generate_text_simple(model, encoded, args.max_new_tokens, cfg["context_length"])
    except (TypeError, ValueError) as err:
        parser.error(str(err))
    print("Input ids: ", encoded[0].tolist())
    print("Output ids:", out[0].tolist())
    print("Output text:", token_ids_to_text(out, tokenizer))
