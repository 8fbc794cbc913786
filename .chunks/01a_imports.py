import argparse
import math
import sys
from pathlib import Path

import tiktoken
import torch
import torch.nn as nn
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
from tiktoken_ext.openai_public import r50k_pat_str
