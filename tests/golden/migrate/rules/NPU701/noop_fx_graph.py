# rules:
import torch.fx

graph = torch.fx.Graph()
