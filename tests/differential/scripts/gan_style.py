"""A GAN trainer in the style of collections of GAN implementations: ``cuda`` decided once, a
legacy ``Tensor`` type chosen from it, labels built with ``Tensor(n, 1).fill_(...)`` and batches
converted with ``.type(Tensor)``. The CPU path is taken where CUDA is not available."""

import hashlib
import json

import torch
import torch.nn as nn

cuda = True if torch.cuda.is_available() else False
torch.manual_seed(9)
generator = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 6), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
adversarial_loss = torch.nn.BCELoss()
if cuda:
    generator.cuda()
    discriminator.cuda()
    adversarial_loss.cuda()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
optimizer_G = torch.optim.Adam(generator.parameters(), lr=0.01, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=0.01, betas=(0.5, 0.999))
data = torch.Generator().manual_seed(4)
losses = []
for _ in range(4):
    imgs = torch.rand(5, 6, generator=data, dtype=torch.float64)
    valid = Tensor(imgs.size(0), 1).fill_(1.0)
    fake = Tensor(imgs.size(0), 1).fill_(0.0)
    real_imgs = imgs.type(Tensor)
    z = torch.randn(imgs.shape[0], 4, generator=data).type(Tensor)
    optimizer_G.zero_grad()
    gen_imgs = generator(z)
    g_loss = adversarial_loss(discriminator(gen_imgs), valid)
    g_loss.backward()
    optimizer_G.step()
    optimizer_D.zero_grad()
    real_loss = adversarial_loss(discriminator(real_imgs), valid)
    fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
    d_loss = (real_loss + fake_loss) / 2
    d_loss.backward()
    optimizer_D.step()
    losses.append([d_loss.item(), g_loss.item()])
weights = repr([p.detach().cpu().tolist() for m in (generator, discriminator) for p in m.parameters()])
device = "cpu" if not cuda else torch.device("cuda").type
print(json.dumps({"device": device, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
