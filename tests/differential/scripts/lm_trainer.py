"""A word-level LSTM language model trainer with a ``--cuda`` flag (the CPU path is without it)."""

import argparse
import hashlib
import json
import sys

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true", help="use CUDA")
args = parser.parse_args()
torch.manual_seed(1111)
if torch.cuda.is_available() and not args.cuda:
    print("WARNING: You have a CUDA device, so you should probably run with --cuda", file=sys.stderr)
device = torch.device("cuda" if args.cuda else "cpu")
corpus = torch.randint(0, 50, (20 * 35 + 1,))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(50, 12)
        self.rnn = nn.LSTM(12, 12)
        self.decoder = nn.Linear(12, 50)

    def forward(self, source, hidden):
        output, hidden = self.rnn(self.encoder(source), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, 12), weight.new_zeros(1, bsz, 12))


train_data = batchify(corpus, 4)
model = RNNModel().to(device)
criterion = nn.NLLLoss()
hidden = model.init_hidden(4)
losses = []
for i in range(0, train_data.size(0) - 1, 35):
    seq_len = min(35, train_data.size(0) - 1 - i)
    source, target = train_data[i : i + seq_len], train_data[i + 1 : i + 1 + seq_len].reshape(-1)
    hidden = tuple(h.detach() for h in hidden)
    model.zero_grad()
    output, hidden = model(source, hidden)
    loss = criterion(torch.log_softmax(output.view(-1, 50), dim=1), target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-20)
    losses.append(loss.item())
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device.type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
