# -*- coding: latin-1 -*-
# Auteur: René Müller © 2019 -- données sur le GPU
import torch

label = "réseau"  # étiquette
x = torch.ones(2, device="cuda:0")  # à la carte
print(label, x.is_cuda)
