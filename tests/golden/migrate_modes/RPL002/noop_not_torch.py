# rules:
# modes: replace
import math
from scipy.special import digamma
from mylib import lgamma

a = math.lgamma(3.0)
b = digamma(2.0)
c = lgamma(x)
d = torch.lgamma(x)  # torch is not imported in this file
