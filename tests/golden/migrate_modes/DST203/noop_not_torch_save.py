# rules: 
# modes: distributed=main.py
# path: ckpt.py
import numpy as np

np.save("a.npy", data)
